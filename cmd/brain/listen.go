package main

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// errOpenMode refuses to serve an open API (no tokens) beyond this machine.
type errOpenMode struct{ listen string }

func (e errOpenMode) Error() string {
	return fmt.Sprintf("refusing to serve an open API on %s: no auth tokens are configured, so anyone who reaches it would be admin. "+
		"Add tokens to brain.yaml (auth.tokens, see `brain token new`), or listen on a loopback address such as 127.0.0.1:8080, "+
		"or pass --insecure-open if the network in front of it is trusted", e.listen)
}

// checkOpenMode decides whether the API may serve on listen: with tokens
// it may serve anywhere; without (open mode, everyone is admin) only on a
// loopback address, unless insecureOpen. warn, when not empty, is what to
// log at WARN level.
func checkOpenMode(listen string, tokens int, insecureOpen bool) (warn string, err error) {
	if tokens > 0 {
		return "", nil
	}
	if isLoopback(listen) {
		return "no auth tokens configured: the API is open (every request is admin) and served on loopback only", nil
	}
	if insecureOpen {
		return "no auth tokens configured and --insecure-open: the API is open to anyone who reaches " + listen, nil
	}
	return "", errOpenMode{listen}
}

// isLoopback reports whether every address listen binds to is a loopback
// one: 127.0.0.0/8, ::1 or the name localhost. An empty host binds every
// interface; other names are not resolved and count as not loopback.
func isLoopback(listen string) bool {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	addr, err := netip.ParseAddr(host)
	return err == nil && addr.Unmap().IsLoopback()
}
