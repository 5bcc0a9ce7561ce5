package node

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/internal/nodetest"
	"github.com/engine-brain/brain/internal/testutil"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/store"
	"github.com/engine-brain/brain/tools"
)

// A due timer fires once across three nodes, survives a node restart, and
// a cancelled one never fires.
func TestTimersFireOnceAcrossNodes(t *testing.T) {
	t.Parallel()
	onEveryDeployment(t, testTimersFireOnceAcrossNodes)
}

func testTimersFireOnceAcrossNodes(t *testing.T, d deployment) {
	clock := nodetest.NewClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	models := map[string]llm.Model{"default": nodetest.Script(t, `turns: [{rounds: [{calls: [{name: respond, args: {message: "ok"}}]}]}]`)}
	mk := func(id string) *Node {
		n, err := New(Config{Redis: d.client(t), NodeID: id, Models: models, Recipes: testRecipes(t), Clock: clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		return n // not started: the test fires timers by hand
	}
	nodes := []*Node{mk("a"), mk("b"), mk("c")}
	ctx := context.Background()
	rec, err := nodes[0].Create(ctx, NewProcess{Recipe: "default"})
	if err != nil {
		t.Fatal(err)
	}
	caller := tools.Caller{ProcessID: rec.ID, Recipe: "default"}
	if _, _, err := nodes[0].ScheduleWakeup(ctx, caller, tools.Wakeup{In: time.Minute, Message: "standup"}); err != nil {
		t.Fatal(err)
	}
	cancelled, _, err := nodes[0].ScheduleWakeup(ctx, caller, tools.Wakeup{In: time.Minute, Message: "never"})
	if err != nil {
		t.Fatal(err)
	}
	if err := nodes[1].CancelWakeup(ctx, caller, cancelled); err != nil {
		t.Fatal(err)
	}
	fire := func() int {
		var total atomic.Int32
		var wg sync.WaitGroup
		for _, n := range nodes {
			wg.Go(func() {
				k, err := n.FireDueTimers(ctx)
				if err != nil {
					t.Error(err)
				}
				total.Add(int32(k))
			})
		}
		wg.Wait()
		return int(total.Load())
	}
	if got := fire(); got != 0 {
		t.Fatalf("%d timers fired before they were due", got)
	}
	clock.Add(2 * time.Minute)
	nodes[2] = mk("c-restarted") // a restarted node sees the same timers
	if got := fire(); got != 1 {
		t.Fatalf("%d firings across three nodes, want exactly 1", got)
	}
	if got := fire(); got != 0 {
		t.Fatalf("a one-shot timer fired again (%d)", got)
	}
	in, err := nodes[0].Store().Inbox(ctx, rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(in) != 1 || in[0].Kind != conversation.KindSchedule || in[0].Content != "standup" {
		t.Fatalf("inbox = %+v, want one schedule message \"standup\"", in)
	}
}

// A recipe's wakeup.schedules are armed when a process is created; each
// firing posts a schedule message and re-arms the timer for the next time.
func TestRecipeSchedules(t *testing.T) {
	t.Parallel()
	clock := nodetest.NewClock(time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC))
	n, err := New(Config{Redis: testutil.Redis(t), Models: map[string]llm.Model{"default": nodetest.Script(t, delegation)},
		Recipes: testRecipes(t), Clock: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rec, err := n.Create(ctx, NewProcess{Recipe: "reminder"})
	if err != nil {
		t.Fatal(err)
	}
	timers, err := n.Store().Timers(ctx, rec.ID)
	if err != nil || len(timers) != 1 || !timers[0].Due.Equal(time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)) {
		t.Fatalf("timers = %+v, %v; want one due at 10:00", timers, err)
	}
	clock.Add(45 * time.Minute) // 10:15
	if k, err := n.FireDueTimers(ctx); err != nil || k != 1 {
		t.Fatalf("FireDueTimers = %d, %v; want 1", k, err)
	}
	timers, err = n.Store().Timers(ctx, rec.ID)
	if err != nil || len(timers) != 1 || !timers[0].Due.Equal(time.Date(2026, 3, 1, 11, 0, 0, 0, time.UTC)) {
		t.Fatalf("after firing, timers = %+v, %v; want it re-armed for 11:00", timers, err)
	}
	in, err := n.Store().Inbox(ctx, rec.ID)
	if err != nil || len(in) != 1 || in[0].Content != "hourly check" || in[0].Kind != conversation.KindSchedule {
		t.Fatalf("inbox = %+v, %v; want the schedule message", in, err)
	}
}

// A schedule_wakeup call whose node lost Redis before its result was
// saved is run again when the turn is recovered, under the same call key:
// it arms the same timer, so the process has one, and the model is told
// its id.
func TestRecoveredScheduleArmsOneTimer(t *testing.T) {
	t.Parallel()
	rdb := testutil.Redis(t)
	// The second checkpoint holds the call's result (the first, its
	// request).
	drop := &nodetest.DropScript{Suffix: "_checkpoint", Skip: 1, Dropped: make(chan struct{})}
	rdb.AddHook(drop)
	model := nodetest.Script(t, `
turns:
  - rounds:
      - calls: [{name: schedule_wakeup, args: {in: 1h, message: "check the build"}}]
      - calls: [{name: respond, args: {message: "I will look in an hour."}}]
`)
	c := nodetest.NewCommits()
	n := startNode(t, Config{Redis: rdb, Models: map[string]llm.Model{"default": model}, Recipes: testRecipes(t),
		OnCommit: c.Add, LeaseTTL: 500 * time.Millisecond})
	ctx := context.Background()
	rec, err := n.Create(ctx, NewProcess{Recipe: "scheduler", Input: "remind me"})
	if err != nil {
		t.Fatal(err)
	}
	c.Wait(t, "the answer", func(r store.Record) bool { return r.ID == rec.ID && r.Status.State == lifecycle.Blocked })
	select {
	case <-drop.Dropped:
	default:
		t.Fatal("no checkpoint was dropped")
	}
	timers, err := n.Timers(ctx, rec.ID)
	if err != nil || len(timers) != 1 {
		t.Fatalf("timers: %+v, %v; want one", timers, err)
	}
	results := toolResults(t, n, rec.ID, tools.ScheduleWakeup)
	if len(results) != 1 || !strings.HasPrefix(results[0], "Wakeup "+timers[0].ID+" scheduled") {
		t.Errorf("schedule_wakeup results: %q; want one naming timer %s", results, timers[0].ID)
	}
}

// A schedule_wakeup made again under its call key once its one-shot timer
// has fired does not arm it again, and says so; a cancel_wakeup made again
// says the timer is not scheduled.
func TestScheduleAgainAfterTheTimerFired(t *testing.T) {
	t.Parallel()
	n := startNode(t, Config{Redis: testutil.Redis(t), Models: map[string]llm.Model{"default": nodetest.Script(t, "turns: [{rounds: [{text: hi}]}]")}})
	ctx := context.Background()
	rec, err := n.Create(ctx, NewProcess{Recipe: "default"})
	if err != nil {
		t.Fatal(err)
	}
	caller := tools.Caller{ProcessID: rec.ID, CallKey: "t_1/0"}
	w := tools.Wakeup{In: time.Hour, Message: "check"}
	id, _, err := n.ScheduleWakeup(ctx, caller, w)
	if err != nil {
		t.Fatal(err)
	}
	if again, _, err := n.ScheduleWakeup(ctx, caller, w); err != nil || again != id {
		t.Fatalf("ScheduleWakeup again before it fired: %s, %v; want %s again", again, err, id)
	}
	timers, err := n.Timers(ctx, rec.ID)
	if err != nil || len(timers) != 1 {
		t.Fatalf("timers: %+v, %v; want one", timers, err)
	}
	if fired, err := n.Store().FireTimer(ctx, timers[0], time.Time{}); err != nil || !fired {
		t.Fatalf("FireTimer = %v, %v", fired, err)
	}
	again, _, err := n.ScheduleWakeup(ctx, caller, w)
	if !errors.Is(err, tools.ErrWakeupFired) || again != id {
		t.Errorf("ScheduleWakeup again after it fired: %s, %v; want %s, ErrWakeupFired", again, err, id)
	}
	if timers, _ := n.Timers(ctx, rec.ID); len(timers) != 0 {
		t.Errorf("timers after it fired and was scheduled again: %+v, want none", timers)
	}
	other, _, err := n.ScheduleWakeup(ctx, tools.Caller{ProcessID: rec.ID, CallKey: "t_1/1"}, w)
	if err != nil || other == id {
		t.Fatalf("ScheduleWakeup under another call key: %s, %v; want another timer", other, err)
	}
	// cancel_wakeup made again: the timer is gone, and the answer says so.
	if err := n.CancelWakeup(ctx, caller, other); err != nil {
		t.Fatal(err)
	}
	if err := n.CancelWakeup(ctx, caller, other); !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), "wakeup "+other+" is not scheduled: it was cancelled") {
		t.Errorf("CancelWakeup again: %v; want ErrNotFound, saying it is not scheduled", err)
	}
}
