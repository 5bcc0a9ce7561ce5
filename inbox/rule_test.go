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
	conversation.KindSchedule, conversation.KindSystem,
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
			got[string(st)] = append(got[string(st)], cell(OnPost(st, k)))
		}
	}
	if diff := cmp.Diff(doc, got); diff != "" {
		t.Errorf("OnPost against the table of doc.go (-doc +OnPost):\n%s", diff)
	}
}

func TestOnPostNoProcess(t *testing.T) {
	t.Parallel()
	for _, k := range kinds {
		if e := OnPost("", k); !errors.Is(e.Err, ErrNotFound) || e.Bounded || e.Wake || e.Unblock {
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
	)
	wakes, unblocks := Effect{Wake: true}, Effect{Unblock: true, Wake: true}
	tests := []struct {
		state   lifecycle.State
		pending []conversation.Kind
		want    Effect
	}{
		{lifecycle.Ready, nil, Effect{}},
		{lifecycle.Ready, []conversation.Kind{tick}, wakes},
		{lifecycle.Ready, []conversation.Kind{event, system}, wakes},
		{lifecycle.Ready, []conversation.Kind{user}, wakes},
		{lifecycle.Blocked, nil, Effect{}},
		{lifecycle.Blocked, []conversation.Kind{event, tick, system}, Effect{}},
		{lifecycle.Blocked, []conversation.Kind{tick, user}, unblocks},
		{lifecycle.Blocked, []conversation.Kind{operator}, unblocks},
		{lifecycle.Running, []conversation.Kind{user}, Effect{}},
		{lifecycle.Paused, []conversation.Kind{user, tick}, Effect{}},
		{lifecycle.Done, []conversation.Kind{user}, Effect{}},
		{lifecycle.Failed, []conversation.Kind{user}, Effect{}},
	}
	for _, tt := range tests {
		if got := AfterChange(tt.state, tt.pending); got != tt.want {
			t.Errorf("AfterChange(%s, %v) = %+v, want %+v", tt.state, tt.pending, got, tt.want)
		}
	}
}
