package recipes

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestDurationJSON checks that a duration reads from JSON as from YAML,
// and that one written wrong, or too long, is refused saying how to write
// one.
func TestDurationJSON(t *testing.T) {
	var d Duration
	if err := json.Unmarshal([]byte(`"1h30m"`), &d); err != nil || time.Duration(d) != 90*time.Minute {
		t.Errorf(`"1h30m" = %s, %v; want 1h30m0s`, d, err)
	}
	for in, want := range map[string]string{
		`"soon"`:         `invalid duration "soon": write numbers with units (ns, us, ms, s, m, h), such as "90s", "5m" or "1h30m"`,
		`"99999999999h"`: `duration "99999999999h" is too long: the longest is 2562047h47m16.854775807s, about 292 years`,
		`90`:             `a duration is a string such as "90s" or "5m"`,
	} {
		err := json.Unmarshal([]byte(in), &d)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error saying %s", in, err, want)
		}
	}
}
