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

// blockedAddressError is a connection refused because its address is not
// public.
type blockedAddressError struct{ addr string }

func (e *blockedAddressError) Error() string {
	return fmt.Sprintf("the host resolves to %s, not a public internet address (a loopback, private, link-local, reserved or 6to4/Teredo one, "+
		"or one holding such an IPv4 address), which http_fetch reaches only when the recipe lists the host in the tool's allow_hosts", e.addr)
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
