package api

import (
	"bufio"
	"context"
	"encoding/json"
	"iter"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engine-brain/brain"
	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/internal/testutil"
	"github.com/engine-brain/brain/live"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/recipes"
)

// writingModel plays a turn of two rounds: an http_fetch whose arguments
// and the text beside it are not the user's to see, then respond, whose
// arguments stream in pieces and stop halfway until release is closed.
type writingModel struct{ release chan struct{} }

func (m writingModel) Generate(ctx context.Context, req *llm.Request) iter.Seq2[llm.Part, error] {
	second := false
	for _, msg := range req.Messages {
		second = second || msg.Role == conversation.MessageTool
	}
	return func(yield func(llm.Part, error) bool) {
		args := func(id, name, frag string) bool {
			return yield(llm.Part{Kind: llm.PartToolArgs, ToolCall: &conversation.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(frag)}}, nil)
		}
		if !second {
			_ = yield(llm.Part{Kind: llm.PartText, Text: "thinking about secret-plan"}, nil) &&
				args("c1", "http_fetch", `{"url":"https://secret.example/`) && args("c1", "http_fetch", `"}`) &&
				yield(llm.Part{Kind: llm.PartToolCall, ToolCall: &conversation.ToolCall{ID: "c1", Name: "http_fetch",
					Arguments: json.RawMessage(`{"url":"https://secret.example/"}`)}}, nil)
			return
		}
		if !args("c2", "respond", `{"message": "Hel`) || !args("c2", "respond", `lo wor`) {
			return
		}
		select {
		case <-m.release:
		case <-ctx.Done():
			yield(llm.Part{}, ctx.Err())
			return
		}
		_ = args("c2", "respond", `ld", "awaiting_user_input": true}`) &&
			yield(llm.Part{Kind: llm.PartToolCall, ToolCall: &conversation.ToolCall{ID: "c2", Name: "respond",
				Arguments: json.RawMessage(`{"message": "Hello world", "awaiting_user_input": true}`)}}, nil)
	}
}

// sseFrame is one frame of an event stream.
type sseFrame struct{ id, event, data string }

// readFrames reads the frames of an event stream as they come, until the
// stream ends or ctx does (a reader that no one reads from any more).
func readFrames(ctx context.Context, body *bufio.Scanner, out chan<- sseFrame) {
	defer close(out)
	var f sseFrame
	for body.Scan() {
		line := body.Text()
		switch {
		case line == "":
			if f.event != "" || f.data != "" {
				select {
				case out <- f:
				case <-ctx.Done():
					return
				}
			}
			f = sseFrame{}
		case strings.HasPrefix(line, "id: "):
			f.id = line[4:]
		case strings.HasPrefix(line, "event: "):
			f.event = line[7:]
		case strings.HasPrefix(line, "data: "):
			f.data = line[6:]
		}
	}
}

// A user's event stream served by one node shows the progress of a turn
// that another node runs: the answer growing in order, and never a tool's
// arguments or the text the model wrote to itself; a progress frame has no
// id, and a client that reconnects with the last id it saw gets every
// durable event after it and no stale progress.
func TestLiveProgressAcrossNodes(t *testing.T) {
	t.Parallel()
	srv := testutil.StartRedis(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "writer.yaml"), []byte("name: writer\nextends: default\ntools: [respond, http_fetch]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	lib, err := recipes.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	runner, err := brain.New(brain.Config{Redis: srv.Client(t), NodeID: "runner", Recipes: lib,
		Models: map[string]llm.Model{"default": writingModel{release: release}}})
	if err != nil {
		t.Fatal(err)
	}
	// The API's node runs no chat turn: the turn is the runner's.
	front, err := brain.New(brain.Config{Redis: srv.Client(t), NodeID: "front", Recipes: lib, Engines: []string{"worker"},
		Models: map[string]llm.Model{"default": writingModel{}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []*brain.Node{runner, front} {
		if err := n.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = n.Stop(context.Background()) })
	}
	api, err := New(Config{Backend: front, Heartbeat: 50 * time.Millisecond, Tokens: []Token{{Name: "ada", Role: RoleUser, SHA256: HashToken("tok-ada")}}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(checked(t, api))
	t.Cleanup(ts.Close)
	ada := NewClient(ts.URL, "tok-ada")
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	p, err := ada.CreateProcess(ctx, CreateRequest{Recipe: "writer"})
	if err != nil {
		t.Fatal(err)
	}

	open := func(ctx context.Context, last string) <-chan sseFrame {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+"/v1/processes/"+p.ID+"/events/stream", nil)
		req.Header.Set("Authorization", "Bearer tok-ada")
		if last != "" {
			req.Header.Set("Last-Event-ID", last)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("stream: %s", resp.Status)
		}
		frames := make(chan sseFrame)
		go func() {
			defer resp.Body.Close()
			readFrames(ctx, bufio.NewScanner(resp.Body), frames)
		}()
		return frames
	}
	first, drop := context.WithCancel(ctx)
	frames := open(first, "")
	if _, err := ada.Send(ctx, p.ID, "Greet the world.", ""); err != nil {
		t.Fatal(err)
	}

	var answer, last string
	for answer != "Hello wor" {
		var f sseFrame
		select {
		case f = <-frames:
		case <-ctx.Done():
			t.Fatalf("the answer so far: %q; want it to grow to %q", answer, "Hello wor")
		}
		if strings.Contains(f.data, "secret") {
			t.Errorf("the user's stream shows %s %q", f.event, f.data)
		}
		if f.event != "progress" {
			last = f.id
			continue
		}
		if f.id != "" {
			t.Errorf("a progress frame has id %q", f.id)
		}
		var u live.Update
		if err := json.Unmarshal([]byte(f.data), &u); err != nil {
			t.Fatal(err)
		}
		if !u.User || u.Process != p.ID {
			t.Errorf("progress %+v: want the user's, of %s", u, p.ID)
		}
		if u.Kind == live.Answer {
			if u.Offset != len(answer) {
				t.Errorf("answer delta %q at offset %d, want %d", u.Delta, u.Offset, len(answer))
			}
			answer += u.Delta
		}
	}
	drop()

	close(release)
	for answered, at := false, last; !answered; { // the answer's durable event, read from the log as it grows
		evs, err := front.Follow(ctx, p.ID, at, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			answered = answered || e.ToolCallResponse != nil && e.ToolCallResponse.Name == "respond"
			at = e.ID
		}
	}

	// Reconnect after the last durable event seen: every event after it,
	// through the answer, and no progress of the finished turn.
	want, err := front.Log(ctx, p.ID, last, 0)
	if err != nil {
		t.Fatal(err)
	}
	wantIDs := map[string]bool{}
	for _, e := range conversation.UserView(want) {
		wantIDs[e.ID] = true
	}
	frames = open(ctx, last)
	for len(wantIDs) > 0 {
		var f sseFrame
		select {
		case f = <-frames:
		case <-ctx.Done():
			t.Fatalf("after the reconnect, events %v never came", wantIDs)
		}
		if f.event == "progress" {
			t.Errorf("stale progress after the turn ended: %s", f.data)
		}
		delete(wantIDs, f.id)
		if f.event == string(conversation.TypeToolCallResponse) && !strings.Contains(f.data, "Hello world") {
			t.Errorf("a tool result in the user's view: %s", f.data)
		}
	}
}
