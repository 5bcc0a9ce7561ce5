package providers

import (
	"fmt"
	"strings"
	"testing"
)

// TestSecretNeverPrints: a key in a Config stays out of %v, %+v, %#v, %s
// and %q.
func TestSecretNeverPrints(t *testing.T) {
	t.Parallel()
	p := Config{Name: "gpt", APIKey: "sk-very-secret"}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q"} {
		if out := fmt.Sprintf(verb, p); strings.Contains(out, "sk-very-secret") {
			t.Errorf("%s shows the key: %s", verb, out)
		}
	}
}
