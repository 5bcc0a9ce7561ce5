package lifecycle_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain/lifecycle"
)

// allEvents is written out here, not taken from lifecycle.Events, so that an
// event missing from the package's list still shows up in the tests.
var allEvents = []lifecycle.Event{
	"wake", "await_user", "continue", "user_input", "pause",
	"resume", "finish", "fail", "retry", "recover",
}

func TestEvents(t *testing.T) {
	t.Parallel()
	if diff := cmp.Diff(allEvents, lifecycle.Events()); diff != "" {
		t.Errorf("Events() mismatch (-want +got):\n%s", diff)
	}
	lifecycle.Events()[0] = "bogus"
	if got := lifecycle.Events()[0]; got != lifecycle.Wake {
		t.Errorf("Events()[0] after modifying a returned slice = %q, want wake", got)
	}
}

func TestParseEvent(t *testing.T) {
	t.Parallel()
	for _, ev := range allEvents {
		got, err := lifecycle.ParseEvent(string(ev))
		if err != nil || got != ev {
			t.Errorf("ParseEvent(%q) = %q, %v; want %q, nil", string(ev), got, err, ev)
		}
	}
	for _, in := range []string{"", "WAKE", "Wake", "wake ", "awaitUser", "await-user", "READY", "start"} {
		got, err := lifecycle.ParseEvent(in)
		if !errors.Is(err, lifecycle.ErrInvalid) {
			t.Errorf("ParseEvent(%q) error = %v, want ErrInvalid", in, err)
			continue
		}
		if got != "" {
			t.Errorf("ParseEvent(%q) = %q, want empty on error", in, got)
		}
		msg := err.Error()
		for _, part := range []string{`event "` + in + `"`, `"wake"`, `"recover"`} {
			if !strings.Contains(msg, part) {
				t.Errorf("ParseEvent(%q) error %q does not contain %s", in, msg, part)
			}
		}
	}
}
