package llmtest

import (
	"context"
	"encoding/json"
	"iter"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest/observer"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/llm"
)

// NoKeyInLogs fails t when a logged line, its fields included, carries
// key.
func NoKeyInLogs(t *testing.T, logs *observer.ObservedLogs, key string) {
	t.Helper()
	for _, e := range logs.All() {
		line := e.Message
		for k, v := range e.ContextMap() {
			b, _ := json.Marshal(v)
			line += " " + k + "=" + string(b)
		}
		if strings.Contains(line, key) {
			t.Errorf("a log line carries the API key: %s", line)
		}
	}
}

// UserRequest is a request of one user message.
func UserRequest(text string) *llm.Request {
	return &llm.Request{Messages: []conversation.Message{
		{Role: conversation.MessageUser, Content: []conversation.Block{conversation.TextBlock(text)}},
	}}
}

// Drain collects every part of m's answer to req, and the error that
// ended it.
func Drain(t *testing.T, ctx context.Context, m llm.Model, req *llm.Request) ([]llm.Part, error) {
	t.Helper()
	var parts []llm.Part
	for p, err := range m.Generate(ctx, req) {
		if err != nil {
			return parts, err
		}
		parts = append(parts, p)
	}
	return parts, nil
}

// TextPart is a text delta.
func TextPart(s string) llm.Part { return llm.Part{Kind: llm.PartText, Text: s} }

// CallPart is a tool call with arguments args (JSON).
func CallPart(id, name, args string) llm.Part {
	return llm.Part{Kind: llm.PartToolCall, ToolCall: &conversation.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}}
}

// ArgsPart is a fragment, args, of the arguments of tool call id, name.
func ArgsPart(id, name, args string) llm.Part {
	return llm.Part{Kind: llm.PartToolArgs, ToolCall: &conversation.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}}
}

// CheckToolArgs checks what the argument fragments of an answer's parts
// owe a consumer: each carries the id and name of a call that comes after
// it, and the fragments of a call, joined, are its arguments. Each call
// must come after at least atLeast fragments (0 for a provider that sends
// calls whole).
func CheckToolArgs(t testing.TB, parts []llm.Part, atLeast int) {
	t.Helper()
	type streamed struct {
		name string
		args strings.Builder
		n    int
	}
	open := map[string]*streamed{} // by call id, until the call comes
	called := map[string]bool{}
	for i, p := range parts {
		if (p.Kind == llm.PartToolArgs || p.Kind == llm.PartToolCall) && p.ToolCall == nil {
			t.Errorf("part %d (%s) has no ToolCall", i, p.Kind)
			continue
		}
		switch p.Kind {
		case llm.PartToolArgs:
			c := p.ToolCall
			if called[c.ID] {
				t.Errorf("part %d: a fragment of call %q after the call", i, c.ID)
			}
			s := open[c.ID]
			if s == nil {
				s = &streamed{name: c.Name}
				open[c.ID] = s
			}
			if c.Name != s.name {
				t.Errorf("part %d: a fragment of call %q names %q, an earlier one %q", i, c.ID, c.Name, s.name)
			}
			s.args.Write(c.Arguments)
			s.n++
		case llm.PartToolCall:
			c := p.ToolCall
			called[c.ID] = true
			s := open[c.ID]
			delete(open, c.ID)
			if s == nil {
				s = &streamed{name: c.Name}
			}
			if s.n < atLeast {
				t.Errorf("call %q came after %d fragments, want at least %d", c.ID, s.n, atLeast)
			}
			if s.n > 0 && (s.name != c.Name || s.args.String() != string(c.Arguments)) {
				t.Errorf("call %q: %s(%s) streamed as %s(%s)", c.ID, c.Name, c.Arguments, s.name, s.args.String())
			}
		}
	}
	for id := range open {
		t.Errorf("fragments of call %q, which never came", id)
	}
}

// WithUsage wraps a model (a scripted one, which reports no usage) and
// reports In input and Out output tokens after each of its answers, as
// providers do.
type WithUsage struct {
	llm.Model
	In, Out int
}

// Generate passes the model's parts on, then a usage part; an error ends
// the answer without one.
func (m WithUsage) Generate(ctx context.Context, req *llm.Request) iter.Seq2[llm.Part, error] {
	return func(yield func(llm.Part, error) bool) {
		for p, err := range m.Model.Generate(ctx, req) {
			if !yield(p, err) || err != nil {
				return
			}
		}
		yield(llm.Part{Kind: llm.PartUsage, Usage: &llm.Usage{InputTokens: m.In, OutputTokens: m.Out}}, nil)
	}
}
