package store

import (
	"context"
	"fmt"
	"strconv"
)

// RenewLease extends the claim's lease by LeaseTTL, or returns ErrFenced
// when it is no longer the claim's.
func (s *Store) RenewLease(ctx context.Context, c *Claim) error {
	ok, err := s.scripts.renew.Run(ctx, s.batch, []string{leaseKey(c.Record.ID)}, c.leaseValue(), s.cfg.LeaseTTL.Milliseconds()).Int()
	if err != nil {
		return fmt.Errorf("store: renew lease of %s: %w", c.Record.ID, err)
	}
	if ok != 1 {
		return fmt.Errorf("%w: process %s: lease of %s lost", ErrFenced, c.Record.ID, c.leaseValue())
	}
	return nil
}

// Release gives the claim's lease up without committing (a graceful stop):
// the process stays RUNNING and its wake stays pending, so another node
// recovers the turn once the wake is stale. It returns ErrFenced when the
// lease was not the claim's any more.
func (s *Store) Release(ctx context.Context, c *Claim) error {
	ok, err := s.scripts.release.Run(ctx, s.batch, []string{leaseKey(c.Record.ID)}, c.leaseValue()).Int()
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
