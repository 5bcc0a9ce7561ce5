package inbox

import (
	"errors"
	"os"
	"regexp"
	"slices"
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

// cell renders an effect of OnPost on a message of kind, to a process in
// state with steering st, as the package comment's table does.
func cell(e Effect, state lifecycle.State, kind conversation.Kind, st Steering) string {
	var s string
	switch {
	case errors.Is(e.Err, ErrClosed):
		return "closed"
	case errors.Is(e.Err, ErrBusy):
		return "busy"
	case e.Err != nil:
		return e.Err.Error()
	case e.Interrupt && (e.Unblock || e.Wake):
		s = "interrupts and wakes"
	case e.Interrupt && Steers(kind, st):
		s = "interrupts"
	case e.Interrupt:
		s = "interrupts, not drained"
	case e.Unblock && e.Wake:
		s = "unblocks"
	case e.Unblock:
		s = "unblocks without waking"
	case e.Wake:
		s = "wakes"
	case state == lifecycle.Running && Steers(kind, st):
		s = "steers"
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
		if st == lifecycle.Running {
			for _, steering := range Steerings() {
				row := string(st) + ", " + string(steering)
				for _, k := range kinds {
					got[row] = append(got[row], cell(OnPost(st, WaitingUser, k, steering), st, k, steering))
				}
			}
			continue
		}
		for _, k := range kinds {
			got[string(st)] = append(got[string(st)], cell(OnPost(st, WaitingUser, k, SteeringQueue), st, k, SteeringQueue))
		}
	}
	for _, k := range kinds {
		got["BLOCKED, approval"] = append(got["BLOCKED, approval"],
			cell(OnPost(lifecycle.Blocked, WaitingApproval, k, SteeringQueue), lifecycle.Blocked, k, SteeringQueue))
	}
	if diff := cmp.Diff(doc, got); diff != "" {
		t.Errorf("OnPost against the table of doc.go (-doc +OnPost):\n%s", diff)
	}
}

func TestOnPostNoProcess(t *testing.T) {
	t.Parallel()
	for _, k := range kinds {
		for _, steering := range Steerings() {
			if e := OnPost("", WaitingUser, k, steering); !errors.Is(e.Err, ErrNotFound) || e.Bounded || e.Wake || e.Unblock || e.Interrupt {
				t.Errorf("OnPost(no process, %s, %s) = %+v, want ErrNotFound alone", k, steering, e)
			}
		}
	}
}

// TestOnPostSteeringOnlyWhileRunning checks that a process's steering
// changes nothing of what a post does unless the process is RUNNING (the
// table of doc.go has a row for each only there), and that "" is
// SteeringQueue.
func TestOnPostSteeringOnlyWhileRunning(t *testing.T) {
	t.Parallel()
	for _, st := range lifecycle.States() {
		for _, waiting := range []Waiting{WaitingUser, WaitingApproval} {
			for _, k := range kinds {
				queue := OnPost(st, waiting, k, SteeringQueue)
				if e := OnPost(st, waiting, k, ""); e != queue {
					t.Errorf("OnPost(%s, %q, %s, \"\") = %+v, want %+v as for queue", st, waiting, k, e, queue)
				}
				if st == lifecycle.Running {
					continue
				}
				for _, steering := range Steerings() {
					if e := OnPost(st, waiting, k, steering); e != queue {
						t.Errorf("OnPost(%s, %q, %s, %s) = %+v, want %+v as for queue", st, waiting, k, steering, e, queue)
					}
				}
			}
		}
	}
}

func TestSteers(t *testing.T) {
	t.Parallel()
	want := map[conversation.Kind][]Steering{ // the steerings with which a running turn drains each kind
		conversation.KindUser:     {SteeringSteer, SteeringInterrupt},
		conversation.KindOperator: Steerings(),
	}
	for _, k := range kinds {
		for _, steering := range append(Steerings(), "") {
			as := steering
			if as == "" {
				as = SteeringQueue
			}
			if got, want := Steers(k, steering), slices.Contains(want[k], as); got != want {
				t.Errorf("Steers(%s, %q) = %v, want %v", k, steering, got, want)
			}
		}
	}
}

func TestSteeringValidate(t *testing.T) {
	t.Parallel()
	for _, s := range append(Steerings(), "") {
		if err := s.Validate(); err != nil {
			t.Errorf("Validate(%q) = %v", s, err)
		}
	}
	if err := Steering("shout").Validate(); err == nil || !strings.Contains(err.Error(), "queue, steer, interrupt or reject") {
		t.Errorf("Validate(shout) = %v, want an error naming the steerings", err)
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
