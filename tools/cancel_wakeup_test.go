package tools

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCancelWakeup(t *testing.T) {
	t.Parallel()
	errUnknown := errors.New(`no wakeup "w-9" of this process; schedule_wakeup returned the ids of yours`)
	tests := []struct {
		name      string
		ctx       context.Context
		err       error
		args      string
		want      Result
		wantCalls []cancelCall
	}{
		{
			name:      "cancelled",
			args:      `{"id":"w-1"}`,
			want:      assistantText("Wakeup w-1 cancelled."),
			wantCalls: []cancelCall{{testCaller, "w-1"}},
		},
		{
			name:      "scheduler error is the model's text",
			err:       errUnknown,
			args:      `{"id":"w-9"}`,
			want:      ErrorResult("%s", errUnknown.Error()),
			wantCalls: []cancelCall{{testCaller, "w-9"}},
		},
		{
			name: "no calling process",
			ctx:  context.Background(),
			args: `{"id":"w-1"}`,
			want: ErrorResult("cancel_wakeup: no calling process"),
		},
		{
			name: "blank id",
			args: `{"id":" "}`,
			want: ErrorResult(WakeupIDBlank),
		},
		{
			name: "missing id",
			args: `{}`,
			want: ErrorResult("invalid arguments for cancel_wakeup: /id: missing required property"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := &fakeScheduler{err: tt.err}
			ctx := tt.ctx
			if ctx == nil {
				ctx = callerCtx()
			}
			got := mustRegistry(t, CancelWakeupTool(s)).Call(ctx, call(CancelWakeup, tt.args))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Call (-want +got):\n%s", diff)
			}
			scheduled, cancelled := s.recorded()
			if diff := cmp.Diff(tt.wantCalls, cancelled); diff != "" {
				t.Errorf("CancelWakeup calls (-want +got):\n%s", diff)
			}
			if len(scheduled) > 0 {
				t.Errorf("ScheduleWakeup called: %+v", scheduled)
			}
		})
	}
}

func TestCancelWakeupDefinition(t *testing.T) {
	t.Parallel()
	def := CancelWakeupTool(&fakeScheduler{}).Definition()
	if def.Name != CancelWakeup {
		t.Errorf("Name = %q", def.Name)
	}
	if !strings.Contains(def.Description, "schedule_wakeup") {
		t.Errorf("description lacks schedule_wakeup: %s", def.Description)
	}
	want := jsonValue(t, `{
		"type": "object",
		"properties": {"id": {"type": "string", "description": "The id schedule_wakeup returned."}},
		"required": ["id"],
		"additionalProperties": false
	}`)
	if diff := cmp.Diff(want, jsonValue(t, string(def.Schema))); diff != "" {
		t.Errorf("schema (-want +got):\n%s", diff)
	}
}
