package httpfetch

import "net/netip"

// Which addresses http_fetch reaches without allow_hosts: those of the
// public internet only. A model told to fetch a URL must not be able to
// read the node's own services, its network's, or a cloud provider's
// metadata endpoint (169.254.169.254), whatever form the address takes:
// an IPv4 address written inside an IPv6 one is judged as that IPv4
// address or refused.
//
// Forms only the network knows cannot be told apart from public addresses
// here: a NAT64 translator on a network-specific prefix (RFC 6052), ISATAP.
// A node on such a network needs its firewall to close that way in.

// nonPublic4 are IPv4 ranges not public that netip's predicates do not
// name.
var nonPublic4 = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"), // carrier-grade NAT
	netip.MustParsePrefix("192.0.0.0/24"),  // IETF protocol assignments
	netip.MustParsePrefix("198.18.0.0/15"), // benchmarking
	netip.MustParsePrefix("240.0.0.0/4"),   // reserved, broadcast
}

// globalUnicast is the IPv6 space handed out for the public internet.
// Everything outside it is local or reserved, among them ::1, the
// deprecated IPv4-compatible ::a.b.c.d (RFC 4291), the IPv4-translated
// ::ffff:0:a.b.c.d (RFC 2765), NAT64's local-use 64:ff9b:1::/48, unique
// local fc00::/7, link-local fe80::/10 and multicast ff00::/8: refusing
// what lies outside, rather than listing what to refuse, leaves no form
// forgotten. Should IANA hand out space beyond 2000::/3, this is the line
// to change.
var globalUnicast = netip.MustParsePrefix("2000::/3")

// nat64 is NAT64's well-known prefix (RFC 6052): 64:ff9b::a.b.c.d reaches
// a.b.c.d through the network's translator, so it is judged as a.b.c.d.
// It is not refused outright: on an IPv6-only node it is the way to every
// IPv4 site.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// tunnels are the IPv6 ranges of 6to4 (2002::/16, the IPv4 address in bits
// 16-48) and Teredo (2001::/32, a server's IPv4 address in bits 32-64 and a
// client's, inverted, in the last 32). They are refused whatever IPv4
// address they carry, a public one too: a packet to them leaves through a
// relay, which the node's own network may run, to the address inside, and
// judging that address would trust the decoding of two deprecated
// mechanisms (RFC 7526 retired 6to4's relays). Nothing is lost: they are
// the tunnel addresses of clients behind IPv4, not of servers, and a host
// that has one also has an IPv4 address, which the dialer tries next.
var tunnels = []netip.Prefix{
	netip.MustParsePrefix("2001::/32"),
	netip.MustParsePrefix("2002::/16"),
}

// public reports whether ip is an address of the public internet.
func public(ip netip.Addr) bool {
	if ip.Zone() != "" {
		// A zone names a local interface, and no prefix contains a zoned
		// address: the checks below would let it through.
		return false
	}
	ip = ip.Unmap() // ::ffff:a.b.c.d is a.b.c.d
	if nat64.Contains(ip) {
		ip = netip.AddrFrom4([4]byte(ip.AsSlice()[12:]))
	}
	if ip.Is6() {
		return public6(ip)
	}
	return public4(ip)
}

func public4(ip netip.Addr) bool {
	if !ip.Is4() || ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsMulticast() || ip.IsUnspecified() {
		return false
	}
	for _, p := range nonPublic4 {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

func public6(ip netip.Addr) bool {
	if !globalUnicast.Contains(ip) {
		return false
	}
	for _, p := range tunnels {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}
