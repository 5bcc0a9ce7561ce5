package inbox

import (
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/lifecycle"
)

var kinds = []conversation.Kind{
	conversation.KindUser, conversation.KindOperator, conversation.KindProcessEvent,
	conversation.KindSchedule, conversation.KindSystem, conversation.KindApproval,
}

// cell renders an effect of OnPost as the package comment's table does.
func cell(e Effect) string {
	var s string
	switch {
	case errors.Is(e.Err, ErrClosed):
		return "closed"
	case e.Err != nil:
		return e.Err.Error()
	case e.Unblock && e.Wake:
		s = "unblocks"
	case e.Unblock:
		s = "unblocks without waking"
	case e.Wake:
		s = "wakes"
	default:
		s = "stored"
	}
	if e.Bounded {
		s += ", L"
	}
	return s
}

// TestDocTable checks the package comment's table against OnPost, cell by
// cell: the table a reader trusts is the rule the code runs.
func TestDocTable(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(src), "\n")
	head := -1
	for i, l := range lines {
		if strings.HasPrefix(l, "//\tstate ") && strings.Contains(l, "process_event") {
			head = i
			break
		}
	}
	if head < 0 {
		t.Fatal("doc.go has no table of the wake rule (a line \"//\\tstate  user ... process_event ...\")")
	}
	cols := regexp.MustCompile(`\s{2,}`)
	header := cols.Split(strings.TrimPrefix(lines[head], "//\t"), -1)
	want := []string{"state"}
	for _, k := range kinds {
		want = append(want, string(k))
	}
	if diff := cmp.Diff(want, header); diff != "" {
		t.Fatalf("doc.go table header (-want +got):\n%s", diff)
	}
	doc := map[string][]string{}
	for _, l := range lines[head+1:] {
		if !strings.HasPrefix(l, "//\t") {
			break
		}
		row := cols.Split(strings.TrimPrefix(l, "//\t"), -1)
		doc[row[0]] = row[1:]
	}
	got := map[string][]string{}
	for _, st := range lifecycle.States() {
		for _, k := range kinds {
			got[string(st)] = append(got[string(st)], cell(OnPost(st, WaitingUser, k)))
		}
	}
	for _, k := range kinds {
		got["BLOCKED, approval"] = append(got["BLOCKED, approval"], cell(OnPost(lifecycle.Blocked, WaitingApproval, k)))
	}
	if diff := cmp.Diff(doc, got); diff != "" {
		t.Errorf("OnPost against the table of doc.go (-doc +OnPost):\n%s", diff)
	}
}

func TestOnPostNoProcess(t *testing.T) {
	t.Parallel()
	for _, k := range kinds {
		if e := OnPost("", WaitingUser, k); !errors.Is(e.Err, ErrNotFound) || e.Bounded || e.Wake || e.Unblock {
			t.Errorf("OnPost(no process, %s) = %+v, want ErrNotFound alone", k, e)
		}
	}
}

func TestAfterChange(t *testing.T) {
	t.Parallel()
	const (
		user     = conversation.KindUser
		operator = conversation.KindOperator
		event    = conversation.KindProcessEvent
		tick     = conversation.KindSchedule
		system   = conversation.KindSystem
		approval = conversation.KindApproval
	)
	wakes, unblocks := Effect{Wake: true}, Effect{Unblock: true, Wake: true}
	tests := []struct {
		state   lifecycle.State
		waiting Waiting
		pending []conversation.Kind
		want    Effect
	}{
		{lifecycle.Blocked, WaitingApproval, []conversation.Kind{user, tick}, Effect{}},
		{lifecycle.Blocked, WaitingApproval, []conversation.Kind{user, approval}, unblocks},
		{lifecycle.Blocked, WaitingApproval, []conversation.Kind{operator}, unblocks},
		{lifecycle.Blocked, WaitingUser, []conversation.Kind{approval}, unblocks},
		{lifecycle.Ready, WaitingApproval, []conversation.Kind{user}, wakes},
		{lifecycle.Ready, WaitingUser, nil, Effect{}},
		{lifecycle.Ready, WaitingUser, []conversation.Kind{tick}, wakes},
		{lifecycle.Ready, WaitingUser, []conversation.Kind{event, system}, wakes},
		{lifecycle.Ready, WaitingUser, []conversation.Kind{user}, wakes},
		{lifecycle.Blocked, WaitingUser, nil, Effect{}},
		{lifecycle.Blocked, WaitingUser, []conversation.Kind{event, tick, system}, Effect{}},
		{lifecycle.Blocked, WaitingUser, []conversation.Kind{tick, user}, unblocks},
		{lifecycle.Blocked, WaitingUser, []conversation.Kind{operator}, unblocks},
		{lifecycle.Running, WaitingUser, []conversation.Kind{user}, Effect{}},
		{lifecycle.Paused, WaitingUser, []conversation.Kind{user, tick}, Effect{}},
		{lifecycle.Done, WaitingUser, []conversation.Kind{user}, Effect{}},
		{lifecycle.Failed, WaitingUser, []conversation.Kind{user}, Effect{}},
	}
	for _, tt := range tests {
		if got := AfterChange(tt.state, tt.waiting, tt.pending); got != tt.want {
			t.Errorf("AfterChange(%s, %q, %v) = %+v, want %+v", tt.state, tt.waiting, tt.pending, got, tt.want)
		}
	}
}
