package store_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"

	"github.com/engine-brain/brain/live"
	"github.com/engine-brain/brain/store"
)

// waitTimeout bounds the waits of the live tests; it never paces them.
const waitTimeout = time.Minute

// feed is a LiveFeed whose messages the test reads from msgs.
type feed struct {
	*store.LiveFeed
	msgs chan store.LiveMessage
}

// openFeed opens a feed on s, closed when the test ends.
func openFeed(t *testing.T, s *store.Store) *feed {
	t.Helper()
	f := &feed{LiveFeed: s.LiveFeed(), msgs: make(chan store.LiveMessage, 1000)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.Receive(func(m store.LiveMessage) { f.msgs <- m })
	}()
	t.Cleanup(func() {
		_ = f.Close()
		<-done
	})
	return f
}

// next returns the feed's next message.
func (f *feed) next(t *testing.T) store.LiveMessage {
	t.Helper()
	select {
	case m := <-f.msgs:
		return m
	case <-time.After(waitTimeout):
		t.Fatal("the feed received nothing")
		return store.LiveMessage{}
	}
}

// subscribe subscribes the feed to pid and waits for Redis's confirmation.
func (f *feed) subscribe(t *testing.T, pid string) {
	t.Helper()
	if err := f.Subscribe(context.Background(), pid); err != nil {
		t.Fatal(err)
	}
	if m := f.next(t); !m.Subscribed || m.PID != pid {
		t.Fatalf("after Subscribe(%s) the feed received %+v, want the confirmation", pid, m)
	}
}

// updates reads n messages of the feed, which must be updates.
func (f *feed) updates(t *testing.T, n int) []live.Update {
	t.Helper()
	var got []live.Update
	for range n {
		m := f.next(t)
		if m.Subscribed || m.Err != nil || m.PID != m.Update.Process {
			t.Fatalf("the feed received %+v, want an update of its channel's process", m)
		}
		got = append(got, m.Update)
	}
	return got
}

// pipelines is a client hook that records the commands of each pipeline
// of PUBLISH commands.
type pipelines struct {
	mu   sync.Mutex
	sent [][]string // each pipeline's commands, name and channel
}

func (p *pipelines) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (p *pipelines) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (p *pipelines) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		var names []string
		for _, c := range cmds {
			if c.Name() != "publish" {
				return next(ctx, cmds) // a new connection's handshake
			}
			names = append(names, c.Name()+" "+c.Args()[1].(string))
		}
		p.mu.Lock()
		p.sent = append(p.sent, names)
		p.mu.Unlock()
		return next(ctx, cmds)
	}
}

func update(pid string, kind live.Kind, delta string) live.Update {
	return live.Update{Process: pid, Turn: "t1", Round: 1, Kind: kind, At: t0, Delta: delta}
}

// A batch goes out as one pipeline of PUBLISH, one per update, each on its
// process's channel; a feed receives the updates of the processes it
// subscribed to, whole and in order, and no other's.
func TestPublishLive(t *testing.T) {
	t.Parallel()
	e := setup(t)
	hook := &pipelines{}
	e.rdb.AddHook(hook)
	f := openFeed(t, e.s)
	f.subscribe(t, "p1")
	f.subscribe(t, "p2")

	batch := []live.Update{
		{Process: "p1", Turn: "t1", Round: 1, Kind: live.RoundStarted, At: t0, User: true},
		update("p1", live.Text, "Let me "),
		update("p3", live.Text, "not watched"),
		{Process: "p2", Turn: "t9", Round: 2, Kind: live.ToolFinished, At: t0, Tool: "http_fetch", CallID: "c1", IsError: true},
		{Process: "p1", Turn: "t1", Round: 1, Kind: live.Answer, At: t0, Delta: "ünïcode \"quoted\" <b>", Offset: 7, User: true},
	}
	if err := e.s.PublishLive(e.ctx, batch); err != nil {
		t.Fatal(err)
	}
	want := slices.DeleteFunc(slices.Clone(batch), func(u live.Update) bool { return u.Process == "p3" })
	if diff := cmp.Diff(want, f.updates(t, len(want))); diff != "" {
		t.Errorf("received (-want +got):\n%s", diff)
	}
	channel := func(pid string) string { return "publish " + store.Key(store.DefaultPartitions, pid, "live") }
	wantSent := [][]string{{channel("p1"), channel("p1"), channel("p3"), channel("p2"), channel("p1")}}
	hook.mu.Lock()
	defer hook.mu.Unlock()
	if diff := cmp.Diff(wantSent, hook.sent); diff != "" {
		t.Errorf("pipelines (-want +got):\n%s", diff)
	}
	if err := e.s.PublishLive(e.ctx, nil); err != nil || len(hook.sent) != 1 {
		t.Errorf("an empty batch: %v, %d pipelines; want nothing sent", err, len(hook.sent))
	}
}

// numsub is how many clients Redis has subscribed to pid's live updates.
func numsub(t *testing.T, rdb redis.UniversalClient, pid string) int64 {
	t.Helper()
	n, err := rdb.PubSubNumSub(context.Background(), store.Key(store.DefaultPartitions, pid, "live")).Result()
	if err != nil {
		t.Fatal(err)
	}
	return n[store.Key(store.DefaultPartitions, pid, "live")]
}

// waitNumsub waits until Redis has want clients subscribed to pid's live
// updates (each look a round trip).
func waitNumsub(t *testing.T, rdb redis.UniversalClient, pid string, want int64) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for numsub(t, rdb, pid) != want {
		if time.Now().After(deadline) {
			t.Fatalf("%d clients subscribed to %s's live updates, want %d", numsub(t, rdb, pid), pid, want)
		}
	}
}

// Unsubscribe leaves Redis with no subscription, and the feed receives no
// more of the process's updates.
func TestLiveFeedUnsubscribe(t *testing.T) {
	t.Parallel()
	e := setup(t)
	f := openFeed(t, e.s)
	f.subscribe(t, "p1")
	f.subscribe(t, "p2")
	if n := numsub(t, e.rdb, "p1"); n != 1 {
		t.Fatalf("%d subscribers of p1, want 1", n)
	}
	if err := f.Unsubscribe(e.ctx, "p1"); err != nil {
		t.Fatal(err)
	}
	waitNumsub(t, e.rdb, "p1", 0)
	if err := e.s.PublishLive(e.ctx, []live.Update{update("p1", live.Text, "gone"), update("p2", live.Text, "here")}); err != nil {
		t.Fatal(err)
	}
	if got := f.updates(t, 1); got[0].Process != "p2" {
		t.Errorf("received %+v, want p2's update only", got)
	}
}

// A connection that dies is go-redis's to replace: it subscribes again to
// what the feed was subscribed to, and updates come again.
func TestLiveFeedResubscribes(t *testing.T) {
	t.Parallel()
	e := setup(t)
	f := openFeed(t, e.s)
	f.subscribe(t, "p1")
	if n, err := e.rdb.ClientKillByFilter(e.ctx, "TYPE", "pubsub").Result(); err != nil || n != 1 {
		t.Fatalf("CLIENT KILL TYPE pubsub: %d, %v; want the feed's connection killed", n, err)
	}
	if m := f.next(t); !m.Subscribed || m.PID != "p1" {
		t.Fatalf("after its connection was killed the feed received %+v, want p1's subscription again", m)
	}
	if err := e.s.PublishLive(e.ctx, []live.Update{update("p1", live.Text, "again")}); err != nil {
		t.Fatal(err)
	}
	if got := f.updates(t, 1); got[0].Delta != "again" {
		t.Errorf("received %+v, want the update published after the reconnect", got)
	}
}

// A message on a live channel that is not an update reaches the feed's
// reader as an error of its process, and what follows still comes.
func TestLiveFeedCorruptUpdate(t *testing.T) {
	t.Parallel()
	e := setup(t)
	f := openFeed(t, e.s)
	f.subscribe(t, "p1")
	if err := e.rdb.Publish(e.ctx, e.key("p1", "live"), "not JSON").Err(); err != nil {
		t.Fatal(err)
	}
	if m := f.next(t); m.PID != "p1" || m.Err == nil {
		t.Errorf("received %+v, want an error of p1", m)
	}
	if err := e.s.PublishLive(e.ctx, []live.Update{update("p1", live.Text, "fine")}); err != nil {
		t.Fatal(err)
	}
	if got := f.updates(t, 1); got[0].Delta != "fine" {
		t.Errorf("received %+v, want the next update", got)
	}
}
