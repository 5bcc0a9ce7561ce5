package nodetest

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/internal/testutil"
	"github.com/engine-brain/brain/store"
)

// RedisLog returns the log of process pid on srv, read by a store of its
// own.
func RedisLog(t testing.TB, srv *testutil.RedisServer, pid string) ([]conversation.Event, error) {
	st, err := store.New(srv.Client(t), store.Config{})
	if err != nil {
		return nil, err
	}
	return st.Log(context.Background(), pid, "", 0)
}

// Drained returns the contents of the inbox messages in pid's log on srv,
// in order.
func Drained(t testing.TB, srv *testutil.RedisServer, pid string) []string {
	t.Helper()
	evs, err := RedisLog(t, srv, pid)
	if err != nil {
		t.Fatal(err)
	}
	var inbox []string
	for _, e := range evs {
		if e.InboxMessage != nil {
			inbox = append(inbox, e.InboxMessage.Content)
		}
	}
	return inbox
}

// AwaitSentinel waits for a message on the sentinel's channel, failing t
// after WaitTimeout.
func AwaitSentinel(t testing.TB, events *redis.PubSub, channel string) {
	t.Helper()
	timeout := time.After(WaitTimeout)
	for {
		select {
		case m := <-events.Channel():
			if m.Channel == channel {
				return
			}
		case <-timeout:
			t.Fatalf("the sentinel published no %s", channel)
		}
	}
}

// Trims is a Redis hook that signals each pipeline that trimmed a wake
// stream (its script, store's trim_wakes), once it is done, when the
// channel has room.
type Trims chan struct{}

// DialHook is next.
func (Trims) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessHook is next.
func (Trims) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

// ProcessPipelineHook runs the pipeline, then signals a trim.
func (tr Trims) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		trims := func(c redis.Cmder) bool {
			args := c.Args()
			return len(args) > 1 && strings.HasSuffix(fmt.Sprint(args[1]), "_trim_wakes")
		}
		if slices.ContainsFunc(cmds, trims) {
			select {
			case tr <- struct{}{}:
			default:
			}
		}
		return err
	}
}

// DropScript is a Redis hook that fails the first pipeline (every one, with
// All) that runs the script whose function name ends with Suffix (and, with
// With, that has it among its arguments), after Skip such pipelines went
// through, as a dropped connection would: without sending it, or, with
// Sent, once Redis has run it (its answer is lost). It closes Dropped,
// which must be set, at the first drop.
type DropScript struct {
	Suffix  string
	With    string
	All     bool
	Skip    int32
	Sent    bool
	Dropped chan struct{}
	once    sync.Once
	seen    atomic.Int32
}

// DialHook is next.
func (*DropScript) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessHook is next.
func (*DropScript) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

// ProcessPipelineHook drops the pipelines d is for.
func (d *DropScript) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			args := cmd.Args()
			if len(args) < 2 || !strings.HasSuffix(fmt.Sprint(args[1]), d.Suffix) ||
				d.With != "" && !slices.ContainsFunc(args, func(a any) bool { return a == d.With }) {
				continue
			}
			if d.seen.Add(1) <= d.Skip {
				break
			}
			drop := d.All
			d.once.Do(func() {
				drop = true
				close(d.Dropped)
			})
			if drop {
				if d.Sent {
					_ = next(ctx, cmds)
				}
				err := &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
				for _, c := range cmds {
					c.SetErr(err)
				}
				return err
			}
		}
		return next(ctx, cmds)
	}
}
