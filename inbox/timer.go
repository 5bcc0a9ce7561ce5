package inbox

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"time"

	"github.com/engine-brain/brain/conversation"
)

// Timer posts a schedule message to a process when it is due: a wakeup the
// process asked for (schedule_wakeup), one of its recipe's
// wakeup.schedules, or a timer an operator armed through the API. Cron (a
// recurring timer) and At (a one-shot) say when; Due is when it fires next
// (millisecond precision in the store).
type Timer struct {
	ID, PID, Cron string
	// At is the time of a one-shot timer.
	At time.Time
	// Message is the content of the schedule message.
	Message string
	// Decision, when set, is what the timer posts instead of a schedule
	// message: an approval from "timeout", the rejection of a call that
	// was not decided in time (taken only while the call waits for one).
	Decision *conversation.ApprovalDecision
	// Due is when the timer fires next.
	Due time.Time
}

// WakeupError says why a timer cannot be armed, in words for whoever asked
// (a model's tool call, an API request).
type WakeupError struct{ Reason string }

func (e *WakeupError) Error() string { return e.Reason }

// Arm returns t with its id and first due time at now: the next time of
// its Cron after now, else its At. Its id is random, or, given a key (a
// tool call's), derived from the process and the key, so that a call made
// again arms the same timer. A timer with neither Cron nor At, or with a
// Cron that does not parse, is a *WakeupError.
func Arm(t Timer, key string, now time.Time) (Timer, error) {
	t.ID = "w_" + rand.Text()[:10]
	if key != "" {
		sum := sha256.Sum256([]byte(t.PID + "\x00" + key))
		t.ID = "w_" + base32.StdEncoding.EncodeToString(sum[:])[:10] // as rand.Text's
	}
	switch {
	case t.Cron != "":
		next, err := t.Next(now)
		if err != nil {
			return Timer{}, err
		}
		t.Due = next
	case !t.At.IsZero():
		t.Due = t.At
	default:
		return Timer{}, &WakeupError{Reason: `give one of "in", "at" or "cron"`}
	}
	return t, nil
}

// Next returns when a cron timer fires after now, or zero for a one-shot; a Cron that does not
// parse is a *WakeupError.
func (t Timer) Next(now time.Time) (time.Time, error) {
	if t.Cron == "" {
		return time.Time{}, nil
	}
	s, err := ParseCron(t.Cron)
	if err != nil {
		return time.Time{}, &WakeupError{Reason: err.Error()}
	}
	return s.Next(now), nil
}
