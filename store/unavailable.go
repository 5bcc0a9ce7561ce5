package store

import (
	"errors"
	"io"
	"net"
	"syscall"

	"github.com/redis/go-redis/v9"
)

// transientReplies are the error replies of a Redis that cannot serve just
// now but will: loading its data after a restart, a replica during a
// failover, a master short of the replicas its min-replicas-to-write asks
// for, a script running too long, memory full under noeviction (until an
// operator frees some), a cluster changing hands.
var transientReplies = []string{"LOADING", "MASTERDOWN", "READONLY", "NOREPLICAS", "BUSY", "OOM", "TRYAGAIN", "CLUSTERDOWN"}

// Unavailable reports whether err says that Redis could not be reached or
// could not serve just now (a connection refused, reset or timed out, the
// client's pool exhausted, one of transientReplies, a write not on enough
// replicas: ErrNotReplicated), so that the same call
// may succeed later. A write that failed so may or may not have been made:
// retry it as it was, a post with the same idempotency key.
func Unavailable(err error) bool {
	var netErr net.Error
	switch {
	case err == nil:
		return false
	case errors.As(err, &netErr), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, ErrNotReplicated),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, redis.ErrPoolTimeout):
		return true
	}
	for _, prefix := range transientReplies {
		if redis.HasErrorPrefix(err, prefix) {
			return true
		}
	}
	return false
}
