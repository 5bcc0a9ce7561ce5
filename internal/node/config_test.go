package node

import (
	"strings"
	"testing"
	"time"
)

func TestConfigErrors(t *testing.T) {
	t.Parallel()
	_, err := New(Config{Engines: []string{"chat", "robot"}, Concurrency: -1, HistoryBytes: -1, RetainFinished: -time.Hour, MaxLogEvents: 10, OwnerLimit: -1})
	for _, want := range []string{"Redis: required", "Models: required", "Concurrency: must be at least 1", `unknown engine "robot"`, "HistoryBytes: must be positive (got -1)",
		"RetainFinished: must not be negative (got -1h0m0s)", "MaxLogEvents: must be 0 (keep every event) or between 100 and 100000000 (got 10)",
		"OwnerLimit: must not be negative (got -1)"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("New error %v lacks %q", err, want)
		}
	}
}
