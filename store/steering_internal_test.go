package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/inbox"
	"github.com/engine-brain/brain/internal/testutil"
)

// TestInterruptSignalsTheNode checks that a user's message to a RUNNING
// process whose steering is interrupt tells the node that holds the
// process's lease, "<pid> interrupt" on the node's channel, and that no
// other post to a RUNNING process tells it anything.
func TestInterruptSignalsTheNode(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb := testutil.Redis(t)
	s, err := New(rdb, Config{})
	if err != nil {
		t.Fatal(err)
	}
	sub := rdb.Subscribe(ctx, nodeChannel("n1"))
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil { // subscribed: nothing published from now on is missed
		t.Fatal(err)
	}
	signals := sub.Channel()
	for _, steering := range inbox.Steerings() {
		t.Run(string(steering), func(t *testing.T) { // not parallel: they share the channel
			pid := "p_" + string(steering)
			in := Message{Kind: conversation.KindUser, From: "user:ada", Content: "start"}
			if _, err := s.Create(ctx, NewProcess{ID: pid, Recipe: "r", Engine: pid, Input: &in, Steering: steering}); err != nil {
				t.Fatal(err)
			}
			ws, err := s.ReadWakes(ctx, "n1", []string{pid}, 1, time.Millisecond)
			if err != nil || len(ws) != 1 {
				t.Fatalf("ReadWakes = %v, %v; want the process's wake", ws, err)
			}
			if _, err := s.Claim(ctx, ws[0], "n1", "t1"); err != nil {
				t.Fatal(err)
			}
			if _, _, err := s.Post(ctx, pid, Message{Kind: conversation.KindOperator, From: "operator:olga", Content: "hurry"}); err != nil {
				t.Fatal(err)
			}
			_, _, err = s.Post(ctx, pid, Message{Kind: conversation.KindUser, From: "user:ada", Content: "and?"})
			switch {
			case steering == inbox.SteeringReject && !errors.Is(err, inbox.ErrBusy):
				t.Fatalf("a user's message = %v; want ErrBusy", err)
			case steering != inbox.SteeringReject && err != nil:
				t.Fatalf("a user's message = %v; want it taken", err)
			}
			// A mark published after the posts arrives after whatever they
			// published.
			const mark = "mark"
			if err := rdb.Publish(ctx, nodeChannel("n1"), mark).Err(); err != nil {
				t.Fatal(err)
			}
			var got []string
			for marked := false; !marked; {
				select {
				case m := <-signals:
					if marked = m.Payload == mark; !marked {
						got = append(got, m.Payload)
					}
				case <-time.After(10 * time.Second):
					t.Fatalf("the mark never came; heard %q", got)
				}
			}
			var want []string
			if steering == inbox.SteeringInterrupt {
				want = []string{pid + " interrupt"}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("heard on %s (-want +got):\n%s", nodeChannel("n1"), diff)
			}
		})
	}
}
