package node

import (
	"encoding/json"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/llm"
)

// The messages of a model call as the GenAI conventions write them on a
// span (gen_ai.input.messages, gen_ai.output.messages: JSON), only when
// Config.CaptureMessageContent is on.
type (
	genaiMessage struct {
		Role         string      `json:"role"`
		Parts        []genaiPart `json:"parts"`
		FinishReason string      `json:"finish_reason,omitempty"`
	}
	genaiPart struct {
		Type      string          `json:"type"` // text, reasoning, tool_call, tool_call_response
		Content   string          `json:"content,omitempty"`
		ID        string          `json:"id,omitempty"`
		Name      string          `json:"name,omitempty"`
		Arguments json.RawMessage `json:"arguments,omitempty"`
		Response  *string         `json:"response,omitempty"`
	}
)

// inputContent returns the attributes of what req sends the model.
func inputContent(req *llm.Request) []attribute.KeyValue {
	msgs := make([]genaiMessage, 0, len(req.Messages))
	for _, m := range req.Messages {
		g := genaiMessage{Role: string(m.Role)}
		for _, r := range m.Reasoning {
			if r.Text != "" {
				g.Parts = append(g.Parts, genaiPart{Type: "reasoning", Content: r.Text})
			}
		}
		switch text := m.Text(); {
		case m.Role == conversation.MessageTool:
			g.Parts = append(g.Parts, genaiPart{Type: "tool_call_response", ID: m.ToolCallID, Response: &text})
		case text != "":
			g.Parts = append(g.Parts, genaiPart{Type: "text", Content: text})
		}
		for _, c := range m.ToolCalls {
			g.Parts = append(g.Parts, toolCallPart(c))
		}
		msgs = append(msgs, g)
	}
	attrs := []attribute.KeyValue{semconv.GenAIInputMessagesKey.String(marshal(msgs))}
	if req.System != "" {
		attrs = append(attrs, semconv.GenAISystemInstructionsKey.String(marshal([]genaiPart{{Type: "text", Content: req.System}})))
	}
	return attrs
}

// answer collects what a model call answered, for gen_ai.output.messages.
type answer struct {
	text      strings.Builder
	reasoning []string
	calls     []conversation.ToolCall
}

func (a *answer) add(p llm.Part) {
	switch {
	case p.Kind == llm.PartText:
		a.text.WriteString(p.Text)
	case p.Kind == llm.PartReasoning && p.Reasoning != nil && p.Reasoning.Text != "":
		a.reasoning = append(a.reasoning, p.Reasoning.Text)
	case p.Kind == llm.PartToolCall && p.ToolCall != nil:
		a.calls = append(a.calls, *p.ToolCall)
	}
}

// attribute returns gen_ai.output.messages: the answer, which ended for
// finish (a finish reason of the conventions).
func (a *answer) attribute(finish string) attribute.KeyValue {
	m := genaiMessage{Role: string(conversation.MessageAssistant), Parts: []genaiPart{}, FinishReason: finish}
	for _, r := range a.reasoning {
		m.Parts = append(m.Parts, genaiPart{Type: "reasoning", Content: r})
	}
	if a.text.Len() > 0 {
		m.Parts = append(m.Parts, genaiPart{Type: "text", Content: a.text.String()})
	}
	for _, c := range a.calls {
		m.Parts = append(m.Parts, toolCallPart(c))
	}
	return semconv.GenAIOutputMessagesKey.String(marshal([]genaiMessage{m}))
}

// toolCallPart is the part of tool call c; arguments that are not JSON (a
// model's slip) go as a JSON string, so that the messages still encode.
func toolCallPart(c conversation.ToolCall) genaiPart {
	args := c.Arguments
	if !json.Valid(args) {
		args, _ = json.Marshal(string(args))
	}
	return genaiPart{Type: "tool_call", ID: c.ID, Name: c.Name, Arguments: args}
}

// marshal is v's JSON; the values here always encode.
func marshal(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// finishReason is llm's finish reason as the conventions name it.
func finishReason(f llm.FinishReason) string {
	if f == llm.FinishToolCalls {
		return "tool_call"
	}
	return string(f)
}
