package store

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/inbox"
	"github.com/engine-brain/brain/internal/testutil"
	"github.com/engine-brain/brain/lifecycle"
)

// evalPrelude runs body after the prelude, as every script does.
func evalPrelude(t *testing.T, rdb redis.UniversalClient, body string, args ...any) any {
	t.Helper()
	tpl, err := newTemplates()
	if err != nil {
		t.Fatal(err)
	}
	res, err := rdb.Eval(context.Background(), prelude(tpl, false)+"\n"+body, nil, args...).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		t.Fatalf("eval: %v", err)
	}
	return res
}

// TestLuaLifecycle checks the prelude's lifecycle subset against
// lifecycle.Fire for every state and every event the scripts fire.
func TestLuaLifecycle(t *testing.T) {
	t.Parallel()
	rdb := testutil.Redis(t)
	events := []lifecycle.Event{
		lifecycle.Wake, lifecycle.UserInput, lifecycle.Recover, lifecycle.AwaitUser,
		lifecycle.Continue, lifecycle.Finish, lifecycle.Fail,
	}
	for _, st := range lifecycle.States() {
		for _, ev := range events {
			got, _ := evalPrelude(t, rdb, "return fire(ARGV[1], ARGV[2]) or ''", string(ev), string(st)).(string)
			want := ""
			_, to, err := lifecycle.Fire(context.Background(), lifecycle.Status{State: st}, ev, "test", time.Now())
			switch {
			case err == nil:
				want = string(to.State)
			case !errors.Is(err, lifecycle.ErrForbidden):
				t.Fatalf("lifecycle.Fire(%s, %s): %v", st, ev, err)
			}
			if got != want {
				t.Errorf("Lua fire(%s, %s) = %q, lifecycle says %q", ev, st, got, want)
			}
		}
	}
}

// TestLuaWakeRule checks the pure parts of the prelude's wake rule against
// package inbox for every state, way of waiting, kind of message and
// steering, as TestLuaLifecycle checks the lifecycle: which states refuse a
// message (closed), which kinds unblock a BLOCKED process (unblocks), which
// messages count against the inbox limit (bounded), and what a process's
// steering makes of a message (steered: refused as busy, or interrupting
// the turn), read from a record as the store writes it. What the rule
// writes is checked through the store by the conformance suite
// (inboxtest).
func TestLuaWakeRule(t *testing.T) {
	t.Parallel()
	rdb := testutil.Redis(t)
	kinds := []conversation.Kind{conversation.KindUser, conversation.KindOperator, conversation.KindProcessEvent,
		conversation.KindSchedule, conversation.KindSystem, conversation.KindApproval}
	for _, steering := range inbox.Steerings() {
		proc := newLayout(DefaultPartitions).proc("p_" + string(steering))
		if _, err := rdb.Del(context.Background(), proc).Result(); err != nil {
			t.Fatal(err)
		}
		if steering != inbox.SteeringQueue { // as Create writes it
			if err := rdb.HSet(context.Background(), proc, "steering", string(steering)).Err(); err != nil {
				t.Fatal(err)
			}
		}
		for _, st := range lifecycle.States() {
			for _, waiting := range []inbox.Waiting{inbox.WaitingUser, inbox.WaitingApproval} {
				for _, k := range kinds {
					got := evalPrelude(t, rdb, `local state, kind, waiting = ARGV[1], ARGV[2], ARGV[3]
if waiting == '' then waiting = false end -- as rec reads a missing field
local function bit(b) if b then return 1 end return 0 end
return {bit(closed(state)), bit(bounded(kind, state, waiting)), bit(unblocks(kind, waiting)),
  steered({proc = ARGV[4]}, state, kind) or ''}`, string(st), string(k), string(waiting), proc)
					flags := ints(t, got.([]any)[:3])
					luaClosed, luaBounded, luaUnblocks := flags[0] == 1, flags[1] == 1, flags[2] == 1
					luaSteered, _ := got.([]any)[3].(string)
					e := inbox.OnPost(st, waiting, k, steering)
					closed := errors.Is(e.Err, inbox.ErrClosed)
					if luaClosed != closed {
						t.Errorf("Lua closed(%s) = %v; inbox.OnPost(%s, %s) refuses with ErrClosed: %v", st, luaClosed, st, k, closed)
					}
					if e.Err == nil && luaBounded != e.Bounded {
						t.Errorf("Lua bounded(%s, %s, %q) = %v; inbox.OnPost says Bounded %v", k, st, waiting, luaBounded, e.Bounded)
					}
					if luaUnblocks != inbox.Unblocks(k, waiting) {
						t.Errorf("Lua unblocks(%s, %q) = %v; inbox.Unblocks says %v", k, waiting, luaUnblocks, inbox.Unblocks(k, waiting))
					}
					if st == lifecycle.Blocked && luaUnblocks != e.Unblock {
						t.Errorf("Lua unblocks(%s, %q) = %v; inbox.OnPost(BLOCKED, %s) says Unblock %v", k, waiting, luaUnblocks, k, e.Unblock)
					}
					want := ""
					switch {
					case errors.Is(e.Err, inbox.ErrBusy):
						want = "BUSY"
					case e.Interrupt:
						want = "INTERRUPT"
					}
					if luaSteered != want {
						t.Errorf("Lua steered(%s, %s) of a process with steering %s = %q; inbox.OnPost says %q (%+v)", st, k, steering, luaSteered, want, e)
					}
				}
			}
		}
	}
}

// ints returns the integers of a Lua table reply.
func ints(t *testing.T, v any) []int64 {
	t.Helper()
	vs, _ := v.([]any)
	out := make([]int64, len(vs))
	for i, x := range vs {
		n, ok := x.(int64)
		if !ok {
			t.Fatalf("reply %v: element %d is %T, want an integer", v, i, x)
		}
		out[i] = n
	}
	return out
}

// TestLuaKeyLayout checks that the prelude names keys as keys.go does, and
// takes a process's keys in the order processKeys gives them.
func TestLuaKeyLayout(t *testing.T) {
	t.Parallel()
	rdb := testutil.Redis(t)
	l := newLayout(DefaultPartitions)
	const pid = "p_x1"
	n := l.partition(pid)
	keys := l.processKeys(pid)
	got := evalPrelude(t, rdb, `
local k = keys_of(ARGV[2], ARGV[1])
local p = process(ARGV, 3, ARGV[1], ARGV[2])
return {k.proc, k.events, k.lease, k.inbox, k.idem, k.timers,
  p.proc, p.events, p.lease, p.inbox, p.idem, p.timers,
  state_key(p, 'BLOCKED'), wake_key(p, 'worker'), due_key(p), GROUP, owner_key(p, 'alice'), workers_key(p),
  approvals_key(p), waiting_key(p), bell_key(p, 'worker')}`,
		pid, l.base(n), keys[0], keys[1], keys[2], keys[3], keys[4], keys[5])
	want := append(append(keys[:6:6], keys...),
		l.state(n, lifecycle.Blocked), l.wake(n, "worker"), l.due(n), wakeGroup, l.owner(n, "alice"), l.workers(pid),
		l.approvals(pid), l.waiting(n), bellOf(l.wake(n, "worker")))
	if diff := cmp.Diff(want, strs(got)); diff != "" {
		t.Errorf("Lua key layout (-Go +Lua):\n%s", diff)
	}
	if k := l.processKeys(pid); k[0] != l.proc(pid) || k[1] != l.events(pid) || k[2] != l.lease(pid) ||
		k[3] != l.inbox(pid) || k[5] != l.timersOf(pid) || k[0] != Key(DefaultPartitions, pid, "proc") {
		t.Errorf("processKeys and the single-key helpers disagree: %v", k)
	}
}

// TestRender checks that events filled in by Lua from a template decode in
// Go to the values given, whatever characters those hold.
func TestRender(t *testing.T) {
	t.Parallel()
	rdb := testutil.Redis(t)
	at := time.Date(2025, 1, 2, 3, 4, 5, 6, time.FixedZone("CET", 3600))
	args := (&Store{keys: newLayout(1)}).processArgs("p1", at)
	tests := []struct{ name, from, content string }{
		{"plain", "user:alice", "hello"},
		{"json syntax", `a"b\c`, `{"x": [1, "2"]}` + "\n\t/</script>"},
		{"unicode", "usér:アリス", "ça va? 👋 \u2028"},
		{"placeholder lookalike", "\x00by", `"\u0000content"`},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, _ := evalPrelude(t, rdb, `local p = process(KEYS, 1, ARGV[1], ARGV[2], ARGV[3], ARGV[4])
return render(p, TPL.inbox, {'t1', ARGV[6], ARGV[5], 'user', ARGV[6], ARGV[7]}) -- turn, by, id, kind, from, content`,
				append(args, "1-1", tt.from, tt.content)...).(string)
			var got conversation.Event
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("rendered JSON %s: %v", out, err)
			}
			want := stamped(conversation.NewInboxMessage("1-1", conversation.KindUser, tt.from, tt.content), at.UTC(), "t1", tt.from)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("rendered event (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTransitionConflict checks the version compare-and-set of the
// transition script directly: a stale version writes nothing.
func TestTransitionConflict(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb := testutil.Redis(t)
	s, err := New(rdb, Config{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Create(ctx, NewProcess{ID: "p1", Recipe: "r", Engine: "chat"})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	change, err := encodeEvent(stamped(conversation.NewStateChange("BLOCKED", "PAUSED", "pause"), now, "", "operator:bob"))
	if err != nil {
		t.Fatal(err)
	}
	args := s.processArgs("p1", now)
	args = append(args, r.Version-1, "BLOCKED", "PAUSED", "BLOCKED", change, "0")
	status, _, err := s.run(ctx, s.scripts.transition, s.keys.processKeys("p1"), args...)
	if err != nil || status != "CONFLICT" {
		t.Fatalf("transition with a stale version = %q, %v; want CONFLICT", status, err)
	}
	after, err := s.Get(ctx, "p1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(r, after); diff != "" {
		t.Errorf("record changed by a refused transition (-before +after):\n%s", diff)
	}
	if n, _ := rdb.XLen(ctx, s.keys.events("p1")).Result(); n != 0 {
		t.Errorf("log has %d events after a refused transition, want 0", n)
	}
}

// TestLuaString checks that luaString quotes any text so that Lua reads it
// back byte for byte.
func TestLuaString(t *testing.T) {
	t.Parallel()
	rdb := testutil.Redis(t)
	for _, s := range []string{"", `{"a":"\u0000at"}`, "a]]b]=]c]==", "line\nbreak\\n", "\nleading newline", "\x00"} {
		got, err := rdb.Eval(context.Background(), "return "+luaString(s), nil).Text()
		if err != nil || got != s {
			t.Errorf("Lua read %s back as %q (%v), want %q", luaString(s), got, err, s)
		}
	}
}

// TestTemplateParts checks that a template splits into literal JSON and
// placeholder names, alternating, literal first and last.
func TestTemplateParts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		json string
		want []string
	}{
		{`{"a":1}`, []string{`{"a":1}`}},
		{`{"at":"\u0000at"}`, []string{`{"at":`, "at", `}`}},
		{`{"by":"\u0000by","turn":"\u0000turn","x":"\\u0000no"}`, []string{`{"by":`, "by", `,"turn":`, "turn", `,"x":"\\u0000no"}`}},
	}
	for _, tt := range tests {
		if got := templateParts(tt.json); !slices.Equal(got, tt.want) {
			t.Errorf("templateParts(%s) = %q, want %q", tt.json, got, tt.want)
		}
	}
}

// TestReadTemplates checks that an event a script wrote from a template
// reads back by matching the template exactly as decoding its JSON gives
// it, whatever characters its values hold, and that any other JSON is left
// to decoding.
func TestReadTemplates(t *testing.T) {
	t.Parallel()
	rdb := testutil.Redis(t)
	s := &Store{keys: newLayout(1)}
	tpl, err := newTemplates()
	if err != nil {
		t.Fatal(err)
	}
	s.tpl = tpl
	args := s.processArgs("p1", time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC))
	values := []string{"plain", `a"b\c`, "ça va? 👋 \u2028", "\x00by", `"\u0000content"`, "", "</script>&", "tab\there\nnew",
		"/a/b/", "invalid \xff UTF-8"}
	for name, names := range templateValues {
		for _, v := range values {
			vals := make([]any, len(names))
			for i := range vals {
				vals[i] = v
			}
			data := evalPrelude(t, rdb, `local p = process(KEYS, 1, ARGV[1], ARGV[2], ARGV[3], ARGV[4])
return render(p, TPL[ARGV[5]], {unpack(ARGV, 6)})`, append(append(args, name), vals...)...).(string)
			want, err := decodeEventJSON("1-1", data)
			if err != nil {
				t.Fatalf("%s with %q: %v", name, v, err)
			}
			got, ok := tpl.read(data)
			if utf8.ValidString(v) != ok {
				t.Errorf("%s with %q: read %v, want %v (invalid UTF-8 is left to decoding)", name, v, ok, !ok)
			}
			if ok {
				got.ID = "1-1"
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s with %q: read (-decoded +read):\n%s", name, v, diff)
				}
			}
			if got, err := s.decodeEvent("1-1", data); err != nil || !cmp.Equal(want, got) {
				t.Errorf("%s with %q: Store.decodeEvent = %+v, %v; want %+v", name, v, got, err, want)
			}
			for _, bad := range []string{data[:len(data)-1], data + " ", strings.Replace(data, `"type"`, `"typ"`, 1)} {
				if _, ok := tpl.read(bad); ok {
					t.Errorf("%s with %q: %s read as a template's", name, v, bad)
				}
			}
		}
	}
	other, err := encodeEvent(conversation.NewToolCallRequest("c1", "lookup", []byte(`{"q":"x"}`)))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tpl.read(other); ok {
		t.Errorf("%s read as a template's", other)
	}
}
