package llmtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/llm"
)

// replayCases are the recorded answers a conversation is made of to check
// what an adapter sends back of them, in this order.
var replayCases = []Case{CaseReasoning, CaseWebSearch, CaseToolCall, CaseTwoToolCalls}

// replayConformance checks what an adapter sends back of its own answers
// (see Wire.Provider): a conversation made of the wire's recorded answers,
// as the engine logs them and conversation.ProviderView shows them, is sent
// with the hosted web_search tool and answered with Wire.Replay.
//
//   - Every payload of the adapter's provider (reasoning, tool calls, hosted
//     activity, citations) is in the request as it came, equal as JSON to a
//     value of the request body, but for the formats of Wire.NotReplayed;
//     each records the version of the wire contract it was made under.
//   - The same payloads said to be another provider's are not sent at all,
//     and the request still carries every assistant message's text.
//   - A payload of the adapter's own format that does not decode, or of a
//     version it cannot continue, is refused before anything is sent, with
//     an error naming the provider and the format (or the version) that
//     wraps llm.ErrPayload (provider.Unsendable makes one).
func replayConformance(t *testing.T, newModel func(t *testing.T, srv Server) llm.Model, wire *Wire) {
	events := replayEvents(wire)
	own := payloadsOf(events, wire.Provider)
	if len(own) == 0 {
		t.Fatalf("llmtest: the recorded answers carry no payload of provider %q (Wire.Provider)", wire.Provider)
	}
	t.Run("its payloads record their version", func(t *testing.T) {
		t.Parallel()
		for _, p := range own {
			if p.Version == "" {
				t.Errorf("%s: a %s payload records no version", p.where, p.Format)
			}
		}
	})
	t.Run("its payloads are sent back as they came", func(t *testing.T) {
		t.Parallel()
		body := sendView(t, newModel, wire, conversation.ProviderView(events))
		values := jsonValues(t, body)
		for _, p := range own {
			if slices.Contains(wire.NotReplayed, p.Format) {
				continue
			}
			if !containsValue(values, p.Value) {
				t.Errorf("%s: the %s payload is not in the request as it came: %s\nrequest: %s", p.where, p.Format, p.Value, body)
			}
		}
	})
	t.Run("another provider's payloads are not sent, the text is", func(t *testing.T) {
		t.Parallel()
		view := conversation.ProviderView(relabel(events, "elsewhere"))
		body := sendView(t, newModel, wire, view)
		values := jsonValues(t, body)
		for _, p := range own {
			if containsValue(values, p.Value) && len(p.Value) > 16 {
				t.Errorf("%s: another provider's %s payload was sent: %s", p.where, p.Format, p.Value)
			}
		}
		var texts strings.Builder
		for _, v := range values {
			if s, ok := v.(string); ok {
				texts.WriteString(s)
				texts.WriteByte('\n')
			}
		}
		for i, m := range view {
			if m.Role == conversation.MessageAssistant && m.Text() != "" && !strings.Contains(texts.String(), m.Text()) {
				t.Errorf("messages[%d]: the assistant's text %q is not in the request", i, m.Text())
			}
		}
	})
	for i, p := range own {
		if slices.Contains(wire.NotReplayed, p.Format) {
			continue
		}
		t.Run(fmt.Sprintf("an undecodable %s payload is refused (%d)", p.Format, i), func(t *testing.T) {
			t.Parallel()
			view := conversation.ProviderView(alter(events, wire.Provider, i, func(c *conversation.ProviderPayload) {
				c.Value = json.RawMessage(`12345`)
			}))
			refused(t, newModel, wire, view, wire.Provider, p.Format)
		})
		t.Run(fmt.Sprintf("a %s payload of an unknown version is refused (%d)", p.Format, i), func(t *testing.T) {
			t.Parallel()
			const future = "v-from-the-future-9999"
			view := conversation.ProviderView(alter(events, wire.Provider, i, func(c *conversation.ProviderPayload) {
				c.Version = future
			}))
			refused(t, newModel, wire, view, wire.Provider, future)
		})
	}
}

// replayEvents is the log of a conversation of the wire's recorded
// answers, as the engine writes them: each answer's hosted activity,
// reasoning, text with its citations and tool calls, each call answered,
// then the user's next message.
func replayEvents(wire *Wire) []conversation.Event {
	events := []conversation.Event{conversation.NewInboxMessage("m0", conversation.KindUser, "", "Hello")}
	for i, c := range replayCases {
		s, ok := wire.Streams[c]
		if !ok {
			continue
		}
		r := s.Want
		for _, h := range r.Hosted {
			events = append(events, conversation.NewHostedActivity(h))
		}
		for _, rs := range r.Reasoning {
			events = append(events, conversation.NewReasoning(rs.Text, rs.Signature, rs.Payload))
		}
		if r.Text != "" {
			events = append(events, conversation.NewChatMessage(r.Text, r.Citations...))
		}
		for _, call := range r.ToolCalls {
			req := conversation.NewToolCallRequest(call.ID, call.Name, call.Arguments)
			req.ToolCallRequest.Payload = call.Payload
			events = append(events, req)
		}
		for _, call := range r.ToolCalls {
			events = append(events, conversation.NewToolCallResponse(call.ID, call.Name, []conversation.Block{conversation.TextBlock("ok")}, false))
		}
		events = append(events, conversation.NewInboxMessage(fmt.Sprintf("m%d", i+1), conversation.KindUser, "", "Go on."))
	}
	return events
}

// ownPayload is a payload of provider and the event it is in.
type ownPayload struct {
	conversation.ProviderPayload
	where string
}

// payloadsOf returns the payloads of provider in events, in order.
func payloadsOf(events []conversation.Event, provider string) []ownPayload {
	var out []ownPayload
	eachPayload(events, func(i int, p *conversation.ProviderPayload) {
		if p.Provider == provider {
			out = append(out, ownPayload{*p, fmt.Sprintf("events[%d] (%s)", i, events[i].Type)})
		}
	})
	return out
}

// eachPayload calls f with every payload of events, with the index of its
// event, and returns events with what f made of them: f gets copies, and
// events' own are left alone.
func eachPayload(events []conversation.Event, f func(i int, p *conversation.ProviderPayload)) []conversation.Event {
	out := make([]conversation.Event, len(events))
	for i, e := range events {
		do := func(p **conversation.ProviderPayload) {
			if *p != nil {
				c := **p
				f(i, &c)
				*p = &c
			}
		}
		switch {
		case e.ChatResponse != nil:
			c := *e.ChatResponse
			do(&c.Payload)
			c.Citations = slices.Clone(c.Citations)
			for j := range c.Citations {
				do(&c.Citations[j].Replay)
			}
			e.ChatResponse = &c
		case e.HostedActivity != nil:
			h := *e.HostedActivity
			do(&h.Payload)
			e.HostedActivity = &h
		case e.ToolCallRequest != nil:
			r := *e.ToolCallRequest
			do(&r.Payload)
			e.ToolCallRequest = &r
		}
		out[i] = e
	}
	return out
}

// relabel says every payload of events is provider's.
func relabel(events []conversation.Event, provider string) []conversation.Event {
	return eachPayload(events, func(_ int, p *conversation.ProviderPayload) { p.Provider = provider })
}

// alter changes the n-th payload of provider (in payloadsOf's order) with f.
func alter(events []conversation.Event, provider string, n int, f func(*conversation.ProviderPayload)) []conversation.Event {
	seen := 0
	return eachPayload(events, func(_ int, p *conversation.ProviderPayload) {
		if p.Provider != provider {
			return
		}
		if seen == n {
			f(p)
		}
		seen++
	})
}

// sendView sends view to a server answering Wire.Replay and returns the
// request's body.
func sendView(t *testing.T, newModel func(t *testing.T, srv Server) llm.Model, wire *Wire, view []conversation.Message) []byte {
	t.Helper()
	f, m := replayServer(t, newModel, wire)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := llm.Collect(m.Generate(ctx, replayRequest(view))); err != nil {
		t.Fatalf("Generate: %v", err)
	}
	reqs := f.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	return reqs[0].Body
}

// refused checks that the model refuses view before sending it, with an
// error naming every one of names.
func refused(t *testing.T, newModel func(t *testing.T, srv Server) llm.Model, wire *Wire, view []conversation.Message, names ...string) {
	t.Helper()
	f, m := replayServer(t, newModel, wire)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := llm.Collect(m.Generate(ctx, replayRequest(view)))
	if err == nil {
		t.Fatal("the request was sent; want it refused")
	}
	for _, n := range names {
		if !strings.Contains(err.Error(), n) {
			t.Errorf("error %q does not name %q", err, n)
		}
	}
	if !errors.Is(err, llm.ErrPayload) {
		t.Errorf("error %q does not wrap llm.ErrPayload (make it with provider.Unsendable)", err)
	}
	if errors.Is(err, wire.Sentinels.Unavailable) {
		t.Errorf("error %q says the provider is unavailable: a payload that cannot be sent never heals", err)
	}
	if n := len(f.Requests()); n != 0 {
		t.Errorf("%d requests sent, want none", n)
	}
}

func replayServer(t *testing.T, newModel func(t *testing.T, srv Server) llm.Model, wire *Wire) (*Replayer, llm.Model) {
	t.Helper()
	path := wire.Path
	if wire.Replay.Path != "" {
		path = wire.Replay.Path
	}
	f := &Replayer{Paths: []string{path}, Replies: []Reply{{Status: http.StatusOK, Body: wire.Replay.Body}}, Exhausted: Reply{
		Status: http.StatusInternalServerError, Body: wire.ErrorBody(http.StatusInternalServerError, "no more replies"),
	}}
	hs := httptest.NewServer(f)
	t.Cleanup(hs.Close)
	waits := &Waits{}
	return f, newModel(t, Server{URL: hs.URL, Client: hs.Client(), APIKey: apiKey, MaxAttempts: attempts, Sleep: waits.Sleep})
}

// replayRequest is a request of view, with the hosted web search the
// recorded searches ran under.
func replayRequest(view []conversation.Message) *llm.Request {
	return &llm.Request{Messages: view, Params: llm.Params{HostedTools: []string{"web_search"}}}
}

// jsonValues returns every value of the JSON document body: objects,
// arrays and scalars, at any depth.
func jsonValues(t *testing.T, body []byte) []any {
	t.Helper()
	var doc any
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatalf("the request body is not JSON: %v", err)
	}
	var out []any
	var walk func(v any)
	walk = func(v any) {
		out = append(out, v)
		switch v := v.(type) {
		case map[string]any:
			for _, e := range v {
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(doc)
	return out
}

// containsValue reports whether values holds the JSON value raw.
func containsValue(values []any, raw json.RawMessage) bool {
	var want any
	if json.Unmarshal(raw, &want) != nil {
		return false
	}
	for _, v := range values {
		if reflect.DeepEqual(v, want) {
			return true
		}
	}
	return false
}
