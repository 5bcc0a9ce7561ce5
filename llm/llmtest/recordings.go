package llmtest

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Recording returns the file name in the testdata folder of the calling
// package's tests: a provider's stream as recorded, or as its documentation
// shows it.
func Recording(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Streamed is a 200 reply streaming the recording name.
func Streamed(t testing.TB, name string) Reply {
	t.Helper()
	return Reply{Status: http.StatusOK, Body: Recording(t, name)}
}

// CutStream is Streamed cut after the recording's n-th event (an event ends
// with a blank line), in the middle of the next one.
func CutStream(t testing.TB, name string, n int) Reply {
	t.Helper()
	b := Recording(t, name)
	at := 0
	for range n {
		i := strings.Index(b[at:], "\n\n")
		if i < 0 {
			t.Fatalf("%s has fewer than %d events", name, n)
		}
		at += i + 2
	}
	return Reply{Status: http.StatusOK, Body: b, CutAfter: at + 10}
}
