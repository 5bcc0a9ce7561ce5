package lifecycle_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain/lifecycle"
)

func TestStates(t *testing.T) {
	t.Parallel()
	want := []lifecycle.State{"READY", "RUNNING", "BLOCKED", "PAUSED", "DONE", "FAILED"}
	if diff := cmp.Diff(want, lifecycle.States()); diff != "" {
		t.Errorf("States() mismatch (-want +got):\n%s", diff)
	}
	// The returned slice is a copy.
	lifecycle.States()[0] = "BOGUS"
	if got := lifecycle.States()[0]; got != lifecycle.Ready {
		t.Errorf("States()[0] after modifying a returned slice = %q, want READY", got)
	}
}

func TestParseState(t *testing.T) {
	t.Parallel()
	for _, st := range lifecycle.States() {
		got, err := lifecycle.ParseState(string(st))
		if err != nil || got != st {
			t.Errorf("ParseState(%q) = %q, %v; want %q, nil", string(st), got, err, st)
		}
	}
	for _, in := range []string{"", "ready", "Ready", " READY", "READY ", "PAUSED/READY", "wake", "STOPPED"} {
		got, err := lifecycle.ParseState(in)
		if !errors.Is(err, lifecycle.ErrInvalid) {
			t.Errorf("ParseState(%q) error = %v, want ErrInvalid", in, err)
			continue
		}
		if got != "" {
			t.Errorf("ParseState(%q) = %q, want empty on error", in, got)
		}
		msg := err.Error()
		for _, part := range []string{`state "` + in + `"`, `"READY"`, `"FAILED"`} {
			if !strings.Contains(msg, part) {
				t.Errorf("ParseState(%q) error %q does not contain %s", in, msg, part)
			}
		}
	}
}

func TestStateLiveTerminal(t *testing.T) {
	t.Parallel()
	tests := []struct {
		state          lifecycle.State
		live, terminal bool
	}{
		{lifecycle.Ready, true, false},
		{lifecycle.Running, true, false},
		{lifecycle.Blocked, true, false},
		{lifecycle.Paused, false, false},
		{lifecycle.Done, false, true},
		{lifecycle.Failed, false, false},
		{"", false, false},
		{"BOGUS", false, false},
	}
	for _, tt := range tests {
		if got := tt.state.Live(); got != tt.live {
			t.Errorf("%q.Live() = %v, want %v", tt.state, got, tt.live)
		}
		if got := tt.state.Terminal(); got != tt.terminal {
			t.Errorf("%q.Terminal() = %v, want %v", tt.state, got, tt.terminal)
		}
	}
}

func TestStatusValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status  lifecycle.Status
		wantErr string // substring; empty means valid
	}{
		{lifecycle.Status{State: lifecycle.Ready}, ""},
		{lifecycle.Status{State: lifecycle.Running}, ""},
		{lifecycle.Status{State: lifecycle.Blocked}, ""},
		{lifecycle.Status{State: lifecycle.Paused}, ""},
		{lifecycle.Status{State: lifecycle.Paused, PausedFrom: lifecycle.Ready}, ""},
		{lifecycle.Status{State: lifecycle.Paused, PausedFrom: lifecycle.Running}, ""},
		{lifecycle.Status{State: lifecycle.Paused, PausedFrom: lifecycle.Blocked}, ""},
		{lifecycle.Status{State: lifecycle.Done}, ""},
		{lifecycle.Status{State: lifecycle.Failed}, ""},
		{lifecycle.Status{}, `state "": want one of`},
		{lifecycle.Status{State: "ready"}, `state "ready": want one of`},
		{lifecycle.Status{State: "PAUSED/READY"}, `state "PAUSED/READY": want one of`},
		{lifecycle.Status{State: lifecycle.Paused, PausedFrom: lifecycle.Paused}, `paused_from "PAUSED": want "READY", "RUNNING", "BLOCKED" or empty`},
		{lifecycle.Status{State: lifecycle.Paused, PausedFrom: lifecycle.Done}, `paused_from "DONE"`},
		{lifecycle.Status{State: lifecycle.Paused, PausedFrom: lifecycle.Failed}, `paused_from "FAILED"`},
		{lifecycle.Status{State: lifecycle.Paused, PausedFrom: "ready"}, `paused_from "ready"`},
		{lifecycle.Status{State: lifecycle.Ready, PausedFrom: lifecycle.Running}, `paused_from "RUNNING" is set on a READY process`},
		{lifecycle.Status{State: lifecycle.Done, PausedFrom: lifecycle.Blocked}, `paused_from "BLOCKED" is set on a DONE process`},
	}
	for _, tt := range tests {
		err := tt.status.Validate()
		if tt.wantErr == "" {
			if err != nil {
				t.Errorf("%+v.Validate() = %v, want nil", tt.status, err)
			}
			continue
		}
		if !errors.Is(err, lifecycle.ErrInvalid) || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("%+v.Validate() = %v, want ErrInvalid containing %q", tt.status, err, tt.wantErr)
		}
	}
}

func TestStatusString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status lifecycle.Status
		want   string
	}{
		{lifecycle.Status{State: lifecycle.Ready}, "READY"},
		{lifecycle.Status{State: lifecycle.Paused}, "PAUSED"},
		{lifecycle.Status{State: lifecycle.Paused, PausedFrom: lifecycle.Running}, "PAUSED (from RUNNING)"},
	}
	for _, tt := range tests {
		if got := tt.status.String(); got != tt.want {
			t.Errorf("%+v.String() = %q, want %q", tt.status, got, tt.want)
		}
	}
}
