package httpfetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// nonPublic are address ranges http_fetch does not reach unless the recipe
// lists the host in allow_hosts: a model told to fetch a URL must not be
// able to read the node's own services, its network's, or a cloud
// provider's metadata endpoint (169.254.169.254).
var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"), // carrier-grade NAT
	netip.MustParsePrefix("192.0.0.0/24"),  // IETF protocol assignments
	netip.MustParsePrefix("198.18.0.0/15"), // benchmarking
	netip.MustParsePrefix("240.0.0.0/4"),   // reserved, broadcast
	netip.MustParsePrefix("64:ff9b:1::/48"),
}

// public reports whether ip is an address of the public internet.
func public(ip netip.Addr) bool {
	ip = ip.Unmap()
	if ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() || !ip.IsValid() {
		return false
	}
	for _, p := range nonPublic {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

// blockedAddressError is a connection refused because its address is not
// public.
type blockedAddressError struct{ addr string }

func (e *blockedAddressError) Error() string {
	return fmt.Sprintf("the host resolves to %s, a loopback, private, link-local or reserved address, which http_fetch does not reach "+
		"unless the recipe lists the host in the tool's allow_hosts", e.addr)
}

// publicOnly returns a copy of client whose connections go only to public
// addresses. The check is made on the address dialled, after name
// resolution, so a name that resolves (or re-resolves) to an inner address
// is refused too. The copy connects directly: a proxy would dial for it,
// out of the check's reach.
func publicOnly(client *http.Client) (*http.Client, error) {
	var tr *http.Transport
	switch rt := client.Transport.(type) {
	case nil:
		tr = http.DefaultTransport.(*http.Transport).Clone()
	case *http.Transport:
		tr = rt.Clone()
	default:
		return nil, errors.New("http_fetch without allow_hosts needs an *http.Transport (or none) to keep to public addresses; list the hosts in allow_hosts")
	}
	dialer := &net.Dialer{
		Timeout:   30 * time.Second,
		KeepAlive: 30 * time.Second,
		Control: func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil || !public(ap.Addr()) {
				return &blockedAddressError{addr: address}
			}
			return nil
		},
	}
	tr.Proxy = nil
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		return dialer.DialContext(ctx, network, addr)
	}
	c := *client
	c.Transport = tr
	return &c, nil
}
