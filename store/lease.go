package store

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// RenewLease extends the claim's lease by LeaseTTL, or returns ErrFenced
// when it is no longer the claim's. running is false when the process is
// no longer RUNNING: it was paused, stopped or failed while the turn ran,
// which its node learns here if the news did not reach it otherwise
// (Signals).
func (s *Store) RenewLease(ctx context.Context, c *Claim) (running bool, err error) {
	pid := c.Record.ID
	n, err := s.scripts.renew.Run(ctx, s.batch, []string{s.keys.lease(pid), s.keys.proc(pid)}, c.leaseValue(), s.cfg.LeaseTTL.Milliseconds()).Int()
	if err != nil {
		return false, fmt.Errorf("store: renew lease of %s: %w", pid, err)
	}
	if n == 0 {
		return false, fmt.Errorf("%w: process %s: lease of %s lost", ErrFenced, pid, c.leaseValue())
	}
	return n == 1, nil
}

// Release gives the claim's lease up without committing (a graceful stop):
// the process stays RUNNING and its wake stays pending, so another node
// recovers the turn once the wake is stale. It returns ErrFenced when the
// lease was not the claim's any more.
func (s *Store) Release(ctx context.Context, c *Claim) error {
	ok, err := s.scripts.release.Run(ctx, s.batch, []string{s.keys.lease(c.Record.ID)}, c.leaseValue()).Int()
	if err != nil {
		return fmt.Errorf("store: release %s: %w", c.Record.ID, err)
	}
	if ok != 1 {
		return fmt.Errorf("%w: process %s: lease of %s already lost", ErrFenced, c.Record.ID, c.leaseValue())
	}
	return nil
}

// leaseValue is what the lease key holds for c.
func (c *Claim) leaseValue() string { return c.Node + "|" + strconv.FormatInt(c.Token, 10) }

// HoldLease takes the lease name for holder for ttl, or extends it when
// holder has it already, and reports whether holder holds it now. A duty
// that one node does for all of them (publishing brain_processes) goes
// with such a lease: whoever holds it does the duty until it lapses.
func (s *Store) HoldLease(ctx context.Context, name, holder string, ttl time.Duration) (held bool, err error) {
	key := namedLeaseKey(name)
	renewed, err := s.scripts.renew.Run(ctx, s.batch, []string{key}, holder, ttl.Milliseconds()).Int()
	if err == nil && renewed != 1 {
		held, err = s.rdb.SetNX(ctx, key, holder, ttl).Result()
	}
	if err != nil {
		return false, fmt.Errorf("store: hold lease %s: %w", name, err)
	}
	return renewed == 1 || held, nil
}

// DropLease gives the lease name up if holder holds it, so that another
// node takes the duty at once rather than when it lapses.
func (s *Store) DropLease(ctx context.Context, name, holder string) error {
	if err := s.scripts.release.Run(ctx, s.batch, []string{namedLeaseKey(name)}, holder).Err(); err != nil {
		return fmt.Errorf("store: drop lease %s: %w", name, err)
	}
	return nil
}
