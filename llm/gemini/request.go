package gemini

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"google.golang.org/genai"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/llm/provider"
)

// hostedWebSearch is the one hosted tool this adapter runs: Google Search
// grounding.
const hostedWebSearch = "web_search"

// correctionPrefix starts the text of a system message that arrives in the
// middle of a conversation: Gemini has one system instruction and only user
// and model turns, so a correction goes as user text.
const correctionPrefix = "[system] "

// rawArgument is the key under which tool call arguments that are not a
// JSON object are replayed: functionCall.args must be an object.
const rawArgument = "_raw"

// Roles of Gemini contents.
const (
	roleUser  = "user"
	roleModel = "model"
)

// call is one request as the SDK takes it.
type call struct {
	model    string
	contents []*genai.Content
	config   *genai.GenerateContentConfig
}

// request maps req to a streamGenerateContent call.
func (c *Client) request(req *llm.Request) (*call, error) {
	out := &call{model: req.Params.Model}
	if out.model == "" {
		out.model = c.model
	}
	if out.model == "" {
		return nil, provider.Refused(name, nil, "no model named: set the recipe's model.name or the provider's default model")
	}
	cfg := &genai.GenerateContentConfig{
		// A stream cut mid-way is the retry policy's to handle, not resumed
		// behind its back by the SDK.
		AutomaticContinuation: genai.Ptr(false),
	}
	search := false
	for _, h := range req.Params.HostedTools {
		if h != hostedWebSearch {
			return nil, provider.Refused(name, nil, "hosted tool %q is not supported; Gemini runs only %q (Google Search grounding): remove the others from model.hosted_tools", h, hostedWebSearch)
		}
		search = true
	}
	if req.System != "" {
		cfg.SystemInstruction = &genai.Content{Role: roleUser, Parts: []*genai.Part{{Text: req.System}}}
	}
	if t := req.Params.Temperature; t != nil {
		cfg.Temperature = genai.Ptr(float32(*t))
	}
	cfg.MaxOutputTokens = int32(c.maxTokens)
	if n := req.Params.MaxTokens; n > 0 {
		cfg.MaxOutputTokens = int32(min(n, 1<<31-1))
	}
	if c.thoughts {
		cfg.ThinkingConfig = &genai.ThinkingConfig{IncludeThoughts: true}
	}
	var decls []*genai.FunctionDeclaration
	for i, t := range req.Tools {
		d, err := declaration(t)
		if err != nil {
			return nil, provider.Refused(name, err, "tools[%d] %q: %v", i, t.Name, err)
		}
		decls = append(decls, d)
	}
	if len(decls) > 0 {
		cfg.Tools = append(cfg.Tools, &genai.Tool{FunctionDeclarations: decls})
	}
	if search {
		cfg.Tools = append(cfg.Tools, &genai.Tool{GoogleSearch: &genai.GoogleSearch{}})
	}
	contents, err := contents(req.Messages)
	if err != nil {
		return nil, err
	}
	out.contents, out.config = contents, cfg
	return out, nil
}

// contents maps the provider view, in order, merging consecutive messages
// of one role into one content (function responses first in theirs, so that
// the results of a turn's calls directly follow it). Messages with nothing
// to send are dropped: the API refuses contents without parts.
func contents(view []conversation.Message) ([]*genai.Content, error) {
	var out []*genai.Content
	add := func(role string, parts ...*genai.Part) {
		if len(parts) == 0 {
			return
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Parts = append(out[n-1].Parts, parts...)
			return
		}
		out = append(out, &genai.Content{Role: role, Parts: parts})
	}
	names := map[string]string{} // call id → tool name, for results without one
	for i, m := range view {
		switch m.Role {
		case conversation.MessageSystem:
			if text := m.Text(); text != "" {
				add(roleUser, &genai.Part{Text: correctionPrefix + text})
			}
		case conversation.MessageUser:
			if text := m.Text(); text != "" {
				add(roleUser, &genai.Part{Text: text})
			}
		case conversation.MessageAssistant:
			for _, tc := range m.ToolCalls {
				names[tc.ID] = tc.Name
			}
			parts, err := modelParts(m)
			if err != nil {
				return nil, provider.Unsendable(name, "messages[%d].%v", i, err)
			}
			add(roleModel, parts...)
		case conversation.MessageTool:
			tool := m.ToolName
			if tool == "" {
				tool = names[m.ToolCallID]
			}
			if tool == "" {
				return nil, provider.Refused(name, nil, "messages[%d]: the result of call %q names no tool, and no earlier call has that id", i, m.ToolCallID)
			}
			add(roleUser, functionResponse(m, tool))
		default:
			return nil, provider.Refused(name, nil, "messages[%d] has the unknown role %q", i, m.Role)
		}
	}
	for _, c := range out {
		if c.Role == roleUser {
			c.Parts = responsesFirst(c.Parts)
		}
	}
	return out, nil
}

// responsesFirst moves a user content's function responses before its
// other parts, keeping the order within each group.
func responsesFirst(parts []*genai.Part) []*genai.Part {
	return provider.FirstThose(parts, func(p *genai.Part) bool { return p.FunctionResponse != nil })
}

// modelParts maps an assistant message: thoughts first, then text, then
// function calls, each with the thought signature Gemini gave it. An error
// names the place of a payload that cannot go back (see signatureOf),
// relative to the message: "tool_calls[0]: ...".
//
// Reasoning is replayed only when it carries a Gemini signature (its
// payload): other providers' reasoning means nothing to Gemini, and
// Gemini's own is worth sending only with its signature. A signature
// without thought text came on the answer's text (see assembler) and goes
// back on it.
//
// Hosted activity and citations go as the text they are part of: Gemini
// reports a search in the candidate's groundingMetadata, which no request
// field takes back (see doc.go).
func modelParts(m conversation.Message) ([]*genai.Part, error) {
	var out []*genai.Part
	var textSig []byte
	for j, r := range m.Reasoning {
		sig, err := signatureOf(r.Payload)
		switch {
		case err != nil:
			return nil, fmt.Errorf("reasoning[%d]: %w", j, err)
		case sig == nil:
		case r.Text == "":
			textSig = sig
		default:
			out = append(out, &genai.Part{Text: r.Text, Thought: true, ThoughtSignature: sig})
		}
	}
	if text := m.Text(); text != "" {
		out = append(out, &genai.Part{Text: text, ThoughtSignature: textSig})
	}
	for j, tc := range m.ToolCalls {
		sig, err := signatureOf(tc.Payload)
		if err != nil {
			return nil, fmt.Errorf("tool_calls[%d]: %w", j, err)
		}
		out = append(out, &genai.Part{
			FunctionCall:     &genai.FunctionCall{ID: tc.ID, Name: tc.Name, Args: arguments(tc.Arguments)},
			ThoughtSignature: sig,
		})
	}
	return out, nil
}

// arguments is a call's arguments as functionCall.args: the object as it
// was sent, empty for none, and anything else (invalid JSON, an array)
// wrapped as {"_raw": "<text>"} so that the model sees what it wrote.
func arguments(raw json.RawMessage) map[string]any {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 {
		return map[string]any{}
	}
	var obj map[string]any
	if json.Unmarshal(trimmed, &obj) == nil && obj != nil {
		return obj
	}
	return map[string]any{rawArgument: string(raw)}
}

// functionResponse maps a tool message to a functionResponse part, under
// the keys Gemini documents: "output" for a result, "error" for a failure.
func functionResponse(m conversation.Message, tool string) *genai.Part {
	text := m.ResultText()
	key := "output"
	if m.IsError {
		key = "error"
	}
	return &genai.Part{FunctionResponse: &genai.FunctionResponse{
		ID: m.ToolCallID, Name: tool, Response: map[string]any{key: text},
	}}
}

// declaration maps a tool definition. The schema goes out as raw JSON
// Schema (parametersJsonSchema), as written.
func declaration(t llm.ToolDef) (*genai.FunctionDeclaration, error) {
	d := &genai.FunctionDeclaration{Name: t.Name, Description: t.Description}
	if len(bytes.TrimSpace(t.Schema)) == 0 {
		return d, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(t.Schema, &fields); err != nil || fields == nil {
		return nil, errors.New("the schema must be a JSON object")
	}
	if v, ok := fields["type"]; ok {
		var typ string
		if json.Unmarshal(v, &typ) != nil || typ != "object" {
			return nil, fmt.Errorf(`the schema's type must be "object" (got %s)`, v)
		}
	}
	d.ParametersJsonSchema = json.RawMessage(bytes.TrimSpace(t.Schema))
	return d, nil
}
