package api

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/engine-brain/brain/store"
)

// A record's trimmed events are on the wire when there are some, and
// absent otherwise.
func TestEventsTrimmedOnTheWire(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		trimmed int64
		want    string
	}{{0, ""}, {42, `"events_trimmed":42`}} {
		body, err := json.Marshal(processOf(store.Record{ID: "p_1", Trimmed: tc.trimmed}, identity{role: RoleOperator}))
		if err != nil {
			t.Fatal(err)
		}
		if got := string(body); tc.want == "" && strings.Contains(got, "events_trimmed") || !strings.Contains(got, tc.want) {
			t.Errorf("trimmed %d: %s; want %s", tc.trimmed, got, tc.want)
		}
	}
}
