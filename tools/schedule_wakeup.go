package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Wakeup is a message a process schedules for itself. Exactly one of In,
// At and Cron is set.
type Wakeup struct {
	// In posts the message once, this long after it is scheduled (at least
	// MinWakeupIn).
	In time.Duration
	// At posts the message once, at this time.
	At time.Time
	// Cron posts the message repeatedly, at the times of this 5-field cron
	// expression, until it is cancelled. The [Scheduler] checks it.
	Cron string
	// Message is the content of the posted inbox message.
	Message string
}

// Scheduler keeps the wakeups of processes. The runtime implements it;
// schedule_wakeup and cancel_wakeup call it. The model reads the text of
// its errors: say what was refused and how to fix it (a cron expression
// that does not parse, a time in the past, an unknown wakeup id).
type Scheduler interface {
	// ScheduleWakeup schedules w for the calling process c and returns the
	// wakeup's id and the first time it is due. It must be idempotent
	// under c.CallKey, when set: a second call with it schedules the same
	// wakeup (a resumed turn runs a schedule_wakeup call that has no result
	// again), and returns an error wrapping [ErrWakeupFired], with the id,
	// when that wakeup was a one-shot that has fired already.
	ScheduleWakeup(ctx context.Context, c Caller, w Wakeup) (id string, due time.Time, err error)
	// CancelWakeup cancels the wakeup id of the calling process c.
	CancelWakeup(ctx context.Context, c Caller, id string) error
}

// ErrWakeupFired: the one-shot wakeup a schedule_wakeup call made before
// its node stopped has fired already; it is not scheduled again.
var ErrWakeupFired = errors.New("the wakeup has fired")

// MinWakeupIn is the shortest delay schedule_wakeup's "in" accepts.
const MinWakeupIn = time.Second

// ScheduleWakeupDescription is the model-visible description of
// schedule_wakeup.
const ScheduleWakeupDescription = "Schedule a message to yourself: when it is due, it arrives in your inbox as a " +
	"schedule message. Give exactly one of 'in' (once, after a delay such as \"10m\"), 'at' (once, at an " +
	"RFC 3339 time) or 'cron' (repeatedly, until cancelled), and in 'message' what to do then. " +
	"The result is the wakeup's id, for cancel_wakeup. The message wakes you only while you are not " +
	"waiting for the user: to be woken by it, end your turn with respond(awaiting_user_input: false)."

// scheduleWakeupSchema leaves "exactly one of in, at and cron" to the Go
// check (WakeupArgs.Wakeup) and the descriptions: the OpenAI and
// Anthropic APIs refuse a tool whose schema has oneOf, anyOf or allOf at
// its top level, failing every request that carries the tool.
const scheduleWakeupSchema = `{
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
}`

// WakeupArgs are the arguments of a wakeup, as the schedule_wakeup tool
// and the API take them: exactly one of In, At and Cron (an absent or null
// field is nil), and Message.
type WakeupArgs struct {
	In      *string `json:"in"`
	At      *string `json:"at"`
	Cron    *string `json:"cron"`
	Message string  `json:"message"`
}

// Wakeup checks a and turns it into a Wakeup. what names the wakeup in
// the errors (schedule_wakeup, "the timer"), which say what to fix, to a
// model or a person. They wrap ErrInvalidArguments.
func (a WakeupArgs) Wakeup(what string) (Wakeup, error) {
	var given []string
	for _, f := range []struct {
		name string
		v    *string
	}{{"in", a.In}, {"at", a.At}, {"cron", a.Cron}} {
		if f.v != nil {
			given = append(given, `"`+f.name+`"`)
		}
	}
	if len(given) != 1 {
		got := "none"
		if n := len(given); n > 1 {
			got = strings.Join(given[:n-1], ", ") + " and " + given[n-1]
		}
		return Wakeup{}, reason(ErrInvalidArguments, `%s needs exactly one of "in", "at" and "cron" (got %s): "in" for once after a delay, "at" for once at a time, "cron" for a repeating schedule`, what, got)
	}
	if strings.TrimSpace(a.Message) == "" {
		return Wakeup{}, reason(ErrInvalidArguments, `%s "message" is blank: write what you want to be told when the wakeup is due`, what)
	}
	w := Wakeup{Message: a.Message}
	switch {
	case a.In != nil:
		d, err := time.ParseDuration(strings.TrimSpace(*a.In))
		if err != nil {
			return Wakeup{}, reason(ErrInvalidArguments, `%s "in": %q is not a duration; write one such as "90s", "10m" or "2h30m"`, what, *a.In)
		}
		if d < MinWakeupIn {
			return Wakeup{}, reason(ErrInvalidArguments, `%s "in" must be at least %s (got %q)`, what, MinWakeupIn, *a.In)
		}
		w.In = d
	case a.At != nil:
		t, err := time.Parse(time.RFC3339, strings.TrimSpace(*a.At))
		if err != nil {
			return Wakeup{}, reason(ErrInvalidArguments, `%s "at": %q is not an RFC 3339 time; write one such as "2026-03-01T09:00:00Z" or "2026-03-01T10:00:00+01:00"`, what, *a.At)
		}
		w.At = t
	default:
		if strings.TrimSpace(*a.Cron) == "" {
			return Wakeup{}, reason(ErrInvalidArguments, `%s "cron" is blank: write five fields (minute hour day-of-month month day-of-week) such as "0 9 * * 1-5"`, what)
		}
		w.Cron = *a.Cron
	}
	return w, nil
}

// ScheduleWakeupTool returns the schedule_wakeup tool, which schedules
// wakeups through s for the [Caller] of the call's context. s must not be
// nil.
func ScheduleWakeupTool(s Scheduler) Tool { return scheduleWakeupTool{s: s} }

// ScheduleWakeupFactory returns the catalog entry of schedule_wakeup, which
// takes no settings. It fails to build without a scheduler.
func ScheduleWakeupFactory(s Scheduler) Factory {
	return runtimeFactory(ScheduleWakeup, s != nil, func() Tool { return ScheduleWakeupTool(s) })
}

type scheduleWakeupTool struct{ s Scheduler }

var _ Tool = scheduleWakeupTool{}

func (scheduleWakeupTool) Definition() Definition {
	return Definition{Name: ScheduleWakeup, Description: ScheduleWakeupDescription, Schema: Compact(scheduleWakeupSchema), Idempotent: true}
}

func (t scheduleWakeupTool) Call(ctx context.Context, args json.RawMessage) (Result, error) {
	c, err := callerOf(ctx, ScheduleWakeup)
	if err != nil {
		return Result{}, err
	}
	var a WakeupArgs
	if err := json.Unmarshal(args, &a); err != nil {
		return Result{}, reason(ErrInvalidArguments, `invalid arguments for schedule_wakeup (%v); send {"in": "10m", "message": "..."}`, err)
	}
	w, err := a.Wakeup(ScheduleWakeup)
	if err != nil {
		return Result{}, err
	}
	id, due, err := t.s.ScheduleWakeup(ctx, c, w)
	if errors.Is(err, ErrWakeupFired) {
		return assistantResult(fmt.Sprintf("Wakeup %s was scheduled, and has fired already: its message was posted to your inbox; message: %s", id, w.Message)), nil
	}
	if err != nil {
		return Result{}, err
	}
	return assistantResult(fmt.Sprintf("Wakeup %s scheduled for %s; message: %s", id, due.Format(time.RFC3339), w.Message)), nil
}
