package providers

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// fakeGemini is a Gemini API server answering every streamGenerateContent
// call with one respond call whose message is answer; it records the key
// and path of each request.
type fakeGemini struct {
	*httptest.Server
	mu    sync.Mutex
	keys  []string
	paths []string
}

func newFakeGemini(t *testing.T, answer string) *fakeGemini {
	t.Helper()
	f := &fakeGemini{}
	args, _ := json.Marshal(map[string]string{"message": answer})
	chunk := `{"candidates": [{"content": {"role": "model", "parts": [{"functionCall": {"name": "respond", "args": ` + string(args) + `}}]}, "finishReason": "STOP"}], "responseId": "r1"}`
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		f.mu.Lock()
		f.keys = append(f.keys, r.Header.Get("x-goog-api-key"))
		f.paths = append(f.paths, r.URL.Path)
		f.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: "+chunk+"\r\n\r\n")
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeGemini) last() (key, path string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.keys) == 0 {
		return "", ""
	}
	return f.keys[len(f.keys)-1], f.paths[len(f.paths)-1]
}
