package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/engine-brain/brain/api"
	"github.com/engine-brain/brain/internal/testutil"
)

// slowModel is an OpenAI-compatible server whose answers are respond calls
// it streams at the pace the test sets. Each request takes the next of its
// answers: the message's head, sent as soon as hold lets it (a nil hold
// lets it at once), then the tail once release is closed (a nil release:
// at once).
type slowModel struct {
	*httptest.Server

	mu      sync.Mutex
	answers []slowAnswer
}

type slowAnswer struct {
	hold, release chan struct{}
	head, tail    string
}

func newSlowModel(t *testing.T, answers ...slowAnswer) *slowModel {
	t.Helper()
	m := &slowModel{answers: answers}
	m.Server = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(m.Close)
	return m
}

func (m *slowModel) serve(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model string `json:"model"`
	}
	body, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(body, &req)
	m.mu.Lock()
	if len(m.answers) == 0 || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		m.mu.Unlock()
		http.Error(w, `{"error":{"message":"no answer left","type":"invalid_request_error"}}`, http.StatusNotFound)
		return
	}
	a := m.answers[0]
	m.answers = m.answers[1:]
	m.mu.Unlock()

	wait := func(c chan struct{}) bool {
		if c == nil {
			return true
		}
		select {
		case <-c:
			return true
		case <-r.Context().Done():
			return false
		}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	send := func(chunk string) {
		fmt.Fprintf(w, "data: %s\n\n", chunk)
		w.(http.Flusher).Flush()
	}
	choice := func(delta, finish string) string {
		return fmt.Sprintf(`{"id":"chatcmpl-slow","object":"chat.completion.chunk","created":1767225600,"model":%q,"choices":[{"index":0,"delta":%s,"logprobs":null,"finish_reason":%s}],"usage":null}`,
			req.Model, delta, finish)
	}
	args := func(part string) string {
		q, _ := json.Marshal(part)
		return choice(fmt.Sprintf(`{"tool_calls":[{"index":0,"function":{"arguments":%s}}]}`, q), "null")
	}
	// The message's text inside its JSON string, without the quotes.
	inString := func(s string) string {
		q, _ := json.Marshal(s)
		return string(q[1 : len(q)-1])
	}
	if !wait(a.hold) {
		return
	}
	send(choice(`{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_slow","type":"function","function":{"name":"respond","arguments":""}}]}`, "null"))
	send(args(`{"message": "` + inString(a.head)))
	if !wait(a.release) {
		return
	}
	send(args(inString(a.tail) + `", "awaiting_user_input": true}`))
	send(choice(`{}`, `"tool_calls"`))
	send(fmt.Sprintf(`{"id":"chatcmpl-slow","object":"chat.completion.chunk","created":1767225600,"model":%q,"choices":[],"usage":{"prompt_tokens":100,"completion_tokens":20,"total_tokens":120}}`, req.Model))
	send("[DONE]")
}

// TestBrowserGrowingAnswer runs `brain serve` (open, on a real
// redis-server) against a model that streams its answer slowly, and the
// console shows the answer growing while the turn runs: the head of the
// answer in the live bubble, nothing durable yet, then, once the model
// finishes, the answer in the chat and the bubble gone.
//
// The page must watch the process before the answer's first delta is
// published (progress is not replayed): the first turn's answer is held
// until the page shows the process, so that it reaches the page through
// the stream's follow loop, which the server enters only once it watches
// the process; the second turn's answer is the one that grows.
func TestBrowserGrowingAnswer(t *testing.T) {
	chromium := requireChromium(t)
	bin := brainBinary(t)
	const (
		first = "First answer."
		head  = "The answer grows"
		tail  = ", word by word, and ends here."
	)
	firstGoes, rest := make(chan struct{}), make(chan struct{})
	model := newSlowModel(t,
		slowAnswer{hold: firstGoes, head: first},
		slowAnswer{head: head, release: rest, tail: tail},
	)

	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "recipes"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeRecipe(t, filepath.Join(dir, "recipes"), "slow.yaml", "name: slow\nextends: default\nmodel: {provider: local, name: slow-model}\n")
	config := filepath.Join(dir, "brain.yaml")
	if err := os.WriteFile(config, []byte("recipes: recipes\nproviders:\n  - {name: local, type: openai, base_url: "+model.URL+"/v1}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	rs := testutil.StartRedis(t) // skips, or fails with BRAIN_REQUIRE_REDIS=1, without redis-server
	srv := startServe(t, bin, dir, "--config", config, "--redis", "redis://"+rs.Addr, "--listen", "127.0.0.1:0")
	b := openChromium(t, chromium)
	b.srv, b.rs = srv, rs
	ctx, cancel := context.WithTimeout(b.ctx, e2eTimeout)
	defer cancel()
	c := api.NewClient(srv.url, "")

	p, err := c.CreateProcess(ctx, api.CreateRequest{Recipe: "slow", Input: "Hello?"})
	if err != nil {
		t.Fatal(err)
	}
	b.do("open the process", chromedp.Navigate(srv.url+"/#/p/"+p.ID))
	b.poll("the user's message", `[...document.querySelectorAll('#chat .msg.user')].some((m) => m.textContent.includes('Hello?'))`)
	close(firstGoes)
	b.poll("the first answer", `[...document.querySelectorAll('#chat .msg.assistant')].some((m) => m.textContent.includes('`+first+`')) &&
		document.querySelector('#p-state').textContent === 'BLOCKED'`)

	// The second turn's answer grows: its head shows in the live bubble
	// while the model holds the rest, and nothing of it is in the chat.
	b.do("send a message", chromedp.SetValue(chromedp.CSS("#message"), "Tell me more."),
		chromedp.Click(chromedp.CSS("#message-form button[type=submit]")))
	b.poll("the growing answer", `(() => { const l = document.querySelector('#live');
		return !l.hidden && document.querySelector('#live-text').textContent === '`+head+`'; })()`)
	chat := inBrowser(t, b.bctx, b.fail, "read the chat", chromedp.Text(chromedp.CSS("#chat"), chromedp.NodeReady))
	if strings.Contains(chat, head) {
		t.Errorf("the chat holds the answer before the model finished it:\n%s", chat)
	}
	if got, err := c.GetProcess(ctx, p.ID); err != nil || got.State != "RUNNING" {
		t.Errorf("the process while its answer grows: %+v, %v; want RUNNING", got, err)
	}
	b.shot("growing-1-head")

	// The model finishes: the answer lands in the chat, the bubble goes.
	close(rest)
	b.poll("the answer landed", `[...document.querySelectorAll('#chat .msg.assistant')].some((m) => m.textContent.includes('`+head+tail+`')) &&
		document.querySelector('#live').hidden`)
	b.shot("growing-2-landed")
}
