package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// scheduleCall is one ScheduleWakeup call of a fakeScheduler.
type scheduleCall struct {
	Caller Caller
	Wakeup Wakeup
}

// cancelCall is one CancelWakeup call of a fakeScheduler.
type cancelCall struct {
	Caller Caller
	ID     string
}

// fakeScheduler records its calls and answers with id, due and err.
type fakeScheduler struct {
	id  string
	due time.Time
	err error

	mu        sync.Mutex
	scheduled []scheduleCall
	cancelled []cancelCall
}

var _ Scheduler = (*fakeScheduler)(nil)

func (f *fakeScheduler) ScheduleWakeup(_ context.Context, c Caller, w Wakeup) (string, time.Time, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.scheduled = append(f.scheduled, scheduleCall{c, w})
	return f.id, f.due, f.err
}

func (f *fakeScheduler) CancelWakeup(_ context.Context, c Caller, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cancelled = append(f.cancelled, cancelCall{c, id})
	return f.err
}

func (f *fakeScheduler) recorded() ([]scheduleCall, []cancelCall) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.scheduled, f.cancelled
}

func TestScheduleWakeup(t *testing.T) {
	t.Parallel()
	due := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.FixedZone("", 3600))
	errCron := errors.New(`invalid cron expression "0 9 * *": expected exactly 5 fields, found 4`)
	const msg = "Check whether the build is green."
	ok := func(w Wakeup) []scheduleCall { return []scheduleCall{{testCaller, w}} }
	tests := []struct {
		name      string
		ctx       context.Context
		err       error
		args      string
		want      Result
		wantCalls []scheduleCall
	}{
		{
			name:      "in",
			args:      `{"in":"10m","message":"` + msg + `"}`,
			want:      assistantText("Wakeup w-1 scheduled for 2026-03-01T09:00:00Z; message: " + msg),
			wantCalls: ok(Wakeup{In: 10 * time.Minute, Message: msg}),
		},
		{
			name:      "in of exactly 1s",
			args:      `{"in":"1s","message":"` + msg + `"}`,
			want:      assistantText("Wakeup w-1 scheduled for 2026-03-01T09:00:00Z; message: " + msg),
			wantCalls: ok(Wakeup{In: time.Second, Message: msg}),
		},
		{
			name:      "at",
			args:      `{"at":"2026-03-01T10:00:00+01:00","message":"` + msg + `"}`,
			want:      assistantText("Wakeup w-1 scheduled for 2026-03-01T09:00:00Z; message: " + msg),
			wantCalls: ok(Wakeup{At: at, Message: msg}),
		},
		{
			name:      "cron passed through",
			args:      `{"cron":"0 9 * * 1-5","message":"` + msg + `"}`,
			want:      assistantText("Wakeup w-1 scheduled for 2026-03-01T09:00:00Z; message: " + msg),
			wantCalls: ok(Wakeup{Cron: "0 9 * * 1-5", Message: msg}),
		},
		{
			name:      "scheduler error is the model's text",
			err:       errCron,
			args:      `{"cron":"0 9 * *","message":"` + msg + `"}`,
			want:      ErrorResult("%s", errCron.Error()),
			wantCalls: ok(Wakeup{Cron: "0 9 * *", Message: msg}),
		},
		{
			name:      "made again once its timer fired",
			err:       fmt.Errorf("%w: timer w-1", ErrWakeupFired),
			args:      `{"in":"10m","message":"` + msg + `"}`,
			want:      assistantText("Wakeup w-1 was scheduled, and has fired already: its message was posted to your inbox; message: " + msg),
			wantCalls: ok(Wakeup{In: 10 * time.Minute, Message: msg}),
		},
		{
			name: "no calling process",
			ctx:  context.Background(),
			args: `{"in":"10m","message":"` + msg + `"}`,
			want: ErrorResult("schedule_wakeup: no calling process"),
		},
		{
			name: "none of in, at, cron",
			args: `{"message":"` + msg + `"}`,
			want: ErrorResult(`schedule_wakeup needs exactly one of "in", "at" and "cron" (got none): "in" for once after a delay, "at" for once at a time, "cron" for a repeating schedule`),
		},
		{
			name: "two of in, at, cron",
			args: `{"in":"10m","cron":"0 9 * * *","message":"` + msg + `"}`,
			want: ErrorResult(`schedule_wakeup needs exactly one of "in", "at" and "cron" (got "in" and "cron"): "in" for once after a delay, "at" for once at a time, "cron" for a repeating schedule`),
		},
		{
			name: "all three",
			args: `{"in":"10m","at":"2026-03-01T09:00:00Z","cron":"0 9 * * *","message":"` + msg + `"}`,
			want: ErrorResult(`schedule_wakeup needs exactly one of "in", "at" and "cron" (got "in", "at" and "cron"): "in" for once after a delay, "at" for once at a time, "cron" for a repeating schedule`),
		},
		{
			name: "in not a duration",
			args: `{"in":"10 minutes","message":"` + msg + `"}`,
			want: ErrorResult(`schedule_wakeup "in": "10 minutes" is not a duration; write one such as "90s", "10m" or "2h30m"`),
		},
		{
			name: "in under 1s",
			args: `{"in":"500ms","message":"` + msg + `"}`,
			want: ErrorResult(`schedule_wakeup "in" must be at least 1s (got "500ms")`),
		},
		{
			name: "in negative",
			args: `{"in":"-5m","message":"` + msg + `"}`,
			want: ErrorResult(`schedule_wakeup "in" must be at least 1s (got "-5m")`),
		},
		{
			name: "at not RFC 3339",
			args: `{"at":"tomorrow 9am","message":"` + msg + `"}`,
			want: ErrorResult(`schedule_wakeup "at": "tomorrow 9am" is not an RFC 3339 time; write one such as "2026-03-01T09:00:00Z" or "2026-03-01T10:00:00+01:00"`),
		},
		{
			name: "at without a zone",
			args: `{"at":"2026-03-01T09:00:00","message":"` + msg + `"}`,
			want: ErrorResult(`schedule_wakeup "at": "2026-03-01T09:00:00" is not an RFC 3339 time; write one such as "2026-03-01T09:00:00Z" or "2026-03-01T10:00:00+01:00"`),
		},
		{
			name: "blank cron",
			args: `{"cron":"  ","message":"` + msg + `"}`,
			want: ErrorResult(`schedule_wakeup "cron" is blank: write five fields (minute hour day-of-month month day-of-week) such as "0 9 * * 1-5"`),
		},
		{
			name: "blank message",
			args: `{"in":"10m","message":""}`,
			want: ErrorResult(`schedule_wakeup "message" is blank: write what you want to be told when the wakeup is due`),
		},
		{
			name: "missing message",
			args: `{"in":"10m"}`,
			want: ErrorResult("invalid arguments for schedule_wakeup: /message: missing required property"),
		},
		{
			name: "unknown property",
			args: `{"in":"10m","message":"m","repeat":true}`,
			want: ErrorResult("invalid arguments for schedule_wakeup: /repeat: unknown property (allowed: at, cron, in, message)"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := &fakeScheduler{id: "w-1", due: due, err: tt.err}
			ctx := tt.ctx
			if ctx == nil {
				ctx = callerCtx()
			}
			got := mustRegistry(t, ScheduleWakeupTool(s)).Call(ctx, call(ScheduleWakeup, tt.args))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Call (-want +got):\n%s", diff)
			}
			scheduled, cancelled := s.recorded()
			if diff := cmp.Diff(tt.wantCalls, scheduled); diff != "" {
				t.Errorf("ScheduleWakeup calls (-want +got):\n%s", diff)
			}
			if len(cancelled) > 0 {
				t.Errorf("CancelWakeup called: %+v", cancelled)
			}
		})
	}
}

func TestScheduleWakeupDefinition(t *testing.T) {
	t.Parallel()
	def := ScheduleWakeupTool(&fakeScheduler{}).Definition()
	if def.Name != ScheduleWakeup {
		t.Errorf("Name = %q", def.Name)
	}
	for _, s := range []string{"exactly one of 'in'", "'at'", "'cron'", "cancel_wakeup", "respond(awaiting_user_input: false)"} {
		if !strings.Contains(def.Description, s) {
			t.Errorf("description lacks %q: %s", s, def.Description)
		}
	}
	want := jsonValue(t, `{
		"type": "object",
		"properties": {
			"in": {
				"type": "string",
				"description": "Post the message once, after this delay: a duration such as \"90s\", \"10m\" or \"2h30m\", at least 1s."
			},
			"at": {
				"type": "string",
				"format": "date-time",
				"description": "Post the message once, at this RFC 3339 time, such as \"2026-03-01T09:00:00Z\"."
			},
			"cron": {
				"type": "string",
				"description": "Post the message repeatedly, at the times of this 5-field cron expression (minute hour day-of-month month day-of-week), such as \"0 9 * * 1-5\", until cancel_wakeup cancels it."
			},
			"message": {
				"type": "string",
				"description": "The text you receive when the wakeup is due: say what to do then."
			}
		},
		"required": ["message"],
		"additionalProperties": false
	}`)
	if diff := cmp.Diff(want, jsonValue(t, string(def.Schema))); diff != "" {
		t.Errorf("schema (-want +got):\n%s", diff)
	}
}
