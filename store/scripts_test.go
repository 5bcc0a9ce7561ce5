package store

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/internal/testutil"
	"github.com/engine-brain/brain/lifecycle"
)

// aTurn runs a process through what every turn does: create with a first
// message, claim, checkpoint, commit, and a second message.
func aTurn(t *testing.T, s *Store) {
	t.Helper()
	ctx := context.Background()
	in := Message{Kind: conversation.KindUser, From: "user:alice", Content: "hi"}
	if _, err := s.Create(ctx, NewProcess{ID: "p1", Recipe: "r", Engine: "chat", Input: &in}); err != nil {
		t.Fatalf("Create: %v", err)
	}
	wakes, err := s.ReadWakes(ctx, "n1", []string{"chat"}, 10, time.Millisecond) // the wake is there: no wait
	if err != nil || len(wakes) != 1 {
		t.Fatalf("ReadWakes = %v, %v; want one wake", wakes, err)
	}
	c, err := s.Claim(ctx, wakes[0], "n1", "t1")
	if err != nil {
		t.Fatalf("Claim: %v", err)
	}
	if err := s.Checkpoint(ctx, c, []conversation.Event{conversation.NewChatMessage("thinking")}); err != nil {
		t.Fatalf("Checkpoint: %v", err)
	}
	rec, err := s.Commit(ctx, c, []conversation.Event{conversation.NewChatMessage("hello")}, lifecycle.AwaitUser, "model", nil)
	if err != nil || rec.Status.State != lifecycle.Blocked {
		t.Fatalf("Commit = %s, %v; want BLOCKED", rec.Status, err)
	}
	if _, _, err := s.Post(ctx, "p1", Message{Kind: conversation.KindUser, From: "user:alice", Content: "again"}); err != nil {
		t.Fatalf("Post: %v", err)
	}
	streams, _ := s.wakeStreams([]string{"chat"})
	if wakes, err := s.StealWakes(ctx, "n2", streams, 0, 10); err != nil || len(wakes) != 1 || wakes[0].PID != "p1" {
		t.Fatalf("StealWakes = %v, %v; want the wake of the second message", wakes, err)
	}
}

func libraries(t *testing.T, rdb redis.UniversalClient) []string {
	t.Helper()
	libs, err := rdb.FunctionList(context.Background(), redis.FunctionListQuery{}).Result()
	if err != nil {
		t.Fatalf("FUNCTION LIST: %v", err)
	}
	var names []string
	for _, l := range libs {
		names = append(names, l.Name)
	}
	return names
}

// TestScriptsRunAsFunctions checks that on Redis 7 the scripts run as one
// function library, loaded again when the server has lost it.
func TestScriptsRunAsFunctions(t *testing.T) {
	t.Parallel()
	rdb := testutil.Redis(t)
	s, err := New(rdb, Config{})
	if err != nil {
		t.Fatal(err)
	}
	aTurn(t, s)
	lib := s.scripts.post.lib
	if got := libraries(t, rdb); !slices.Equal(got, []string{lib.name}) || lib.evalOnly.Load() {
		t.Fatalf("libraries = %v (EVAL only: %v), want [%s]", got, lib.evalOnly.Load(), lib.name)
	}
	// A server restarted without persistence has lost its functions.
	if err := rdb.FunctionFlush(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Post(context.Background(), "p1", Message{Kind: conversation.KindUser, From: "user:alice", Content: "once more"}); err != nil {
		t.Fatalf("Post after FUNCTION FLUSH: %v", err)
	}
	if got := libraries(t, rdb); !slices.Equal(got, []string{lib.name}) || lib.evalOnly.Load() {
		t.Errorf("after FUNCTION FLUSH and a post: libraries = %v (EVAL only: %v), want [%s] again", got, lib.evalOnly.Load(), lib.name)
	}
}

// TestScriptsWithoutFunctions checks the EVAL fallback on a server without
// functions (the embedded miniredis) and on one whose ACL denies them.
func TestScriptsWithoutFunctions(t *testing.T) {
	t.Parallel()
	// fallsBack runs a turn on addr as user and checks the scripts ran with
	// EVAL.
	fallsBack := func(t *testing.T, addr, user, password string) {
		rdb := redis.NewClient(&redis.Options{Addr: addr, Username: user, Password: password})
		t.Cleanup(func() { _ = rdb.Close() })
		s, err := New(rdb, Config{})
		if err != nil {
			t.Fatal(err)
		}
		aTurn(t, s)
		if !s.scripts.post.lib.evalOnly.Load() {
			t.Error("the scripts did not fall back to EVAL")
		}
		if retired, err := s.TendLibraries(context.Background()); err != nil || retired != nil {
			t.Errorf("TendLibraries = %v, %v; want nothing to do", retired, err)
		}
	}
	t.Run("miniredis", func(t *testing.T) {
		t.Parallel()
		fallsBack(t, miniredis.RunT(t).Addr(), "", "")
	})
	for name, denied := range map[string][]string{
		"ACL denies functions":         {"-fcall", "-function"},
		"ACL denies loading a library": {"-function"}, // FCALL finds nothing, FUNCTION LOAD is refused
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := testutil.StartRedis(t)
			acl := append([]any{"ACL", "SETUSER", "brain", "on", ">secret", "~*", "&*", "+@all"}, anys(denied)...)
			if err := srv.Client(t).Do(context.Background(), acl...).Err(); err != nil {
				t.Fatal(err)
			}
			fallsBack(t, srv.Addr, "brain", "secret")
		})
	}
}

func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
