package inbox

import (
	"errors"
	"strings"
	"testing"
	"time"
)

var now = time.Date(2026, 3, 14, 9, 30, 0, 0, time.UTC)

func TestArm(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		timer  Timer
		key    string
		due    time.Time
		id     string // "" when random
		reason string // a *WakeupError's
	}{
		{name: "one-shot", timer: Timer{PID: "p_abc", At: now.Add(time.Hour)}, due: now.Add(time.Hour)},
		{name: "cron", timer: Timer{PID: "p_abc", Cron: "0 10 * * *"}, due: time.Date(2026, 3, 14, 10, 0, 0, 0, time.UTC)},
		// The id a keyed timer has had in the store since keys were
		// introduced: the same call arms the same timer after a restart.
		{name: "keyed", timer: Timer{PID: "p_abc", At: now}, key: "t1/0", due: now, id: "w_GFXGEL4TF5"},
		{name: "neither", timer: Timer{PID: "p_abc"}, reason: `give one of "in", "at" or "cron"`},
		{name: "bad cron", timer: Timer{PID: "p_abc", Cron: "every day"}, reason: `invalid cron expression "every day"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Arm(tt.timer, tt.key, now)
			if tt.reason != "" {
				var we *WakeupError
				if !errors.As(err, &we) || !strings.HasPrefix(we.Reason, tt.reason) {
					t.Fatalf("Arm = %v; want a *WakeupError saying %q", err, tt.reason)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !got.Due.Equal(tt.due) {
				t.Errorf("due %s; want %s", got.Due, tt.due)
			}
			switch {
			case tt.id != "" && got.ID != tt.id:
				t.Errorf("id %q; want %q", got.ID, tt.id)
			case tt.id == "" && (len(got.ID) != 12 || !strings.HasPrefix(got.ID, "w_")):
				t.Errorf("id %q; want w_ and 10 random characters", got.ID)
			}
		})
	}
	a, _ := Arm(Timer{PID: "p_abc", At: now}, "", now)
	b, _ := Arm(Timer{PID: "p_abc", At: now}, "", now)
	if a.ID == b.ID {
		t.Errorf("two timers without a key share the id %s", a.ID)
	}
}
