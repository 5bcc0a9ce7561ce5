package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Signal is news for the node that runs a turn of Process, sent by the
// script that made it (lua/prelude.lua signal).
type Signal struct {
	Process string
	What    SignalKind
}

// SignalKind says what reached a running turn.
type SignalKind string

// The signals.
const (
	// Halt: the process was paused, stopped or failed; the turn ends now.
	Halt SignalKind = "halt"
	// Interrupt: a message arrived that cuts the model call in flight
	// (steering.user_messages: interrupt).
	Interrupt SignalKind = "interrupt"
)

// Signals subscribes to the signals for the turns node runs. They are
// Pub/Sub messages, which a connection lost at the wrong moment loses: a
// node also learns of a halt when it renews the lease (RenewLease), and
// of a message at the turn's next checkpoint (Steer). Close the
// subscription to end it.
func (s *Store) Signals(ctx context.Context, node string) (*Subscription, error) {
	ps := s.rdb.Subscribe(ctx, nodeChannel(node))
	if _, err := ps.Receive(ctx); err != nil { // the subscription's confirmation
		_ = ps.Close()
		return nil, fmt.Errorf("store: subscribe to the signals of node %s: %w", node, err)
	}
	sub := &Subscription{ps: ps, c: make(chan Signal, 64)}
	go sub.read()
	return sub, nil
}

// Subscription is a node's subscription to its signals.
type Subscription struct {
	ps *redis.PubSub
	c  chan Signal
}

// C returns the signals as they come; it is closed when the subscription
// is.
func (s *Subscription) C() <-chan Signal { return s.c }

// Close ends the subscription.
func (s *Subscription) Close() error { return s.ps.Close() }

func (s *Subscription) read() {
	defer close(s.c)
	// No health check: its goroutine outlives a subscription closed early,
	// and a connection that died silently costs only a halt's speed (the
	// lease's renewal brings it anyway).
	for m := range s.ps.Channel(redis.WithChannelHealthCheckInterval(0)) {
		pid, what, ok := strings.Cut(m.Payload, " ")
		if ok {
			s.c <- Signal{Process: pid, What: SignalKind(what)}
		}
	}
}
