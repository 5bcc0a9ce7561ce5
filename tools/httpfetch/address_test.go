package httpfetch

import (
	"net/netip"
	"testing"
)

// TestPublicAddresses: http_fetch without allow_hosts reaches the public
// internet only, whatever form an address takes; an IPv4 address inside an
// IPv6 one is judged as that IPv4 address, or refused with its tunnel.
func TestPublicAddresses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		addr string
		want bool
	}{
		{"IPv4", "8.8.8.8", true},
		{"IPv4 too", "93.184.215.14", true},
		{"loopback", "127.0.0.1", false},
		{"private 10/8", "10.1.2.3", false},
		{"private 172.16/12", "172.16.0.1", false},
		{"private 192.168/16", "192.168.1.1", false},
		{"metadata endpoint", "169.254.169.254", false},
		{"carrier-grade NAT", "100.64.0.1", false},
		{"this network", "0.0.0.0", false},
		{"broadcast", "255.255.255.255", false},
		{"multicast", "224.0.0.1", false},
		{"benchmarking", "198.18.0.1", false},
		{"IETF assignments", "192.0.0.1", false},

		{"IPv6", "2001:4860:4860::8888", true},
		{"IPv6 beside Teredo's /32", "2001:4860::1", true},
		{"IPv6 loopback", "::1", false},
		{"IPv6 unspecified", "::", false},
		{"IPv6 link-local", "fe80::1", false},
		{"IPv6 unique local", "fd00::1", false},
		{"IPv6 multicast", "ff02::1", false},
		{"IPv6 discard-only", "100::1", false},

		{"IPv4-mapped public", "::ffff:8.8.8.8", true},
		{"IPv4-mapped private", "::ffff:10.0.0.1", false},
		{"IPv4-mapped metadata", "::ffff:169.254.169.254", false},

		{"IPv4-compatible metadata", "::169.254.169.254", false},
		{"IPv4-compatible loopback", "::127.0.0.1", false},
		{"IPv4-compatible public (deprecated form)", "::8.8.8.8", false},
		{"IPv4-translated metadata", "::ffff:0:169.254.169.254", false},
		{"IPv4-translated public", "::ffff:0:8.8.8.8", false},

		{"NAT64 public", "64:ff9b::8.8.8.8", true},
		{"NAT64 metadata", "64:ff9b::169.254.169.254", false},
		{"NAT64 loopback", "64:ff9b::127.0.0.1", false},
		{"NAT64 private", "64:ff9b::10.0.0.1", false},
		{"NAT64 carrier-grade NAT", "64:ff9b::100.64.0.1", false},
		{"NAT64 beside the /96", "64:ff9b::1:8.8.8.8", false},
		{"NAT64 local-use", "64:ff9b:1::8.8.8.8", false},

		{"6to4 metadata", "2002:a9fe:a9fe::1", false},
		{"6to4 loopback", "2002:7f00:1::1", false},
		{"6to4 public", "2002:808:808::1", false},
		// RFC 4380's example: server 65.54.227.120, client 192.0.2.45.
		{"Teredo public server", "2001:0:4136:e378:8000:63bf:3fff:fdd2", false},
		{"Teredo metadata server", "2001:0:a9fe:a9fe:8000:63bf:3fff:fdd2", false},
		// The client 127.0.0.1, inverted: 7f000001 ^ ffffffff.
		{"Teredo loopback client", "2001:0:4136:e378:8000:63bf:80ff:fffe", false},

		{"zoned link-local", "fe80::1%eth0", false},
		{"zoned public", "2001:4860:4860::8888%eth0", false},
		{"zoned NAT64 local-use", "64:ff9b:1::1%eth0", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := public(netip.MustParseAddr(tt.addr)); got != tt.want {
				t.Errorf("public(%s) = %v, want %v", tt.addr, got, tt.want)
			}
		})
	}
	if public(netip.Addr{}) {
		t.Error("the zero address is public")
	}
}
