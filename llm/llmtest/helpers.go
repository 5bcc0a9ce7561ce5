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
