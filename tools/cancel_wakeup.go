package tools

import (
	"context"
	"encoding/json"
	"strings"
)

// WakeupIDBlank is the error of a cancel_wakeup call with an empty id.
const WakeupIDBlank = `cancel_wakeup "id" is blank: give the id schedule_wakeup returned`

// CancelWakeupDescription is the model-visible description of
// cancel_wakeup.
const CancelWakeupDescription = "Cancel a wakeup you scheduled with schedule_wakeup, by the id it returned. " +
	"A wakeup with 'cron' repeats until it is cancelled."

const cancelWakeupSchema = `{
	"type": "object",
	"properties": {
		"id": {
			"type": "string",
			"description": "The id schedule_wakeup returned."
		}
	},
	"required": ["id"],
	"additionalProperties": false
}`

// CancelWakeupTool returns the cancel_wakeup tool, which cancels wakeups
// through s for the [Caller] of the call's context. s must not be nil.
func CancelWakeupTool(s Scheduler) Tool { return cancelWakeupTool{s: s} }

// CancelWakeupFactory returns the catalog entry of cancel_wakeup, which
// takes no settings. It fails to build without a scheduler.
func CancelWakeupFactory(s Scheduler) Factory {
	return runtimeFactory(CancelWakeup, s != nil, func() Tool { return CancelWakeupTool(s) })
}

type cancelWakeupTool struct{ s Scheduler }

var _ Tool = cancelWakeupTool{}

func (cancelWakeupTool) Definition() Definition {
	// Idempotent: cancelled once, a timer stays cancelled; the Scheduler's
	// answer to a second cancel says that it is not scheduled.
	return Definition{Name: CancelWakeup, Description: CancelWakeupDescription, Schema: Compact(cancelWakeupSchema), Idempotent: true}
}

func (t cancelWakeupTool) Call(ctx context.Context, args json.RawMessage) (Result, error) {
	c, err := callerOf(ctx, CancelWakeup)
	if err != nil {
		return Result{}, err
	}
	var a struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(args, &a); err != nil {
		return Result{}, reason(ErrInvalidArguments, `invalid arguments for cancel_wakeup (%v); send {"id": "..."}`, err)
	}
	if strings.TrimSpace(a.ID) == "" {
		return Result{}, reason(ErrInvalidArguments, WakeupIDBlank)
	}
	if err := t.s.CancelWakeup(ctx, c, a.ID); err != nil {
		return Result{}, err
	}
	return assistantResult("Wakeup " + a.ID + " cancelled."), nil
}
