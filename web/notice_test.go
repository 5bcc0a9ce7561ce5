package web

import (
	"strings"
	"testing"
)

// The console shows a system notice of the user view (a turn that failed
// or stopped early) as a note in the conversation.
func TestNoticeUI(t *testing.T) {
	t.Parallel()
	srv := setup(t)
	_, body := get(t, srv.URL+"/console/app.js")
	for _, w := range []string{"case 'system_notice':", "ev.system_notice", "bubble('note', 'notice · '"} {
		if !strings.Contains(body, w) {
			t.Errorf("app.js lacks %q", w)
		}
	}
}
