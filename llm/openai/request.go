package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	oai "github.com/openai/openai-go/v3"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/llm/provider"
)

// errorPrefix starts the text of a failed tool result, so that the model
// knows the call failed (see toolText).
const errorPrefix = "Error: "

// params maps req to a Chat Completions request (a request without hosted
// tools; see responseParams for the others).
func (c *Client) params(req *llm.Request) (oai.ChatCompletionNewParams, error) {
	var p oai.ChatCompletionNewParams
	model, err := c.modelFor(req)
	if err != nil {
		return p, err
	}
	p.Model = model

	msgs, err := messages(req)
	if err != nil {
		return p, err
	}
	p.Messages = msgs
	for i, t := range req.Tools {
		tool, err := toolParam(t)
		if err != nil {
			return p, provider.Refused(name, err, "tools[%d] %q: %v", i, t.Name, err)
		}
		p.Tools = append(p.Tools, tool)
	}

	if t := req.Params.Temperature; t != nil {
		p.Temperature = oai.Float(*t)
	}
	if n := req.Params.MaxTokens; n > 0 {
		// OpenAI's own models refuse max_tokens in favour of
		// max_completion_tokens; compatible servers know max_tokens best.
		if c.official {
			p.MaxCompletionTokens = oai.Int(int64(n))
		} else {
			p.MaxTokens = oai.Int(int64(n))
		}
	}
	p.StreamOptions.IncludeUsage = oai.Bool(true)
	return p, nil
}

// modelFor is the model req names, else the configured default.
func (c *Client) modelFor(req *llm.Request) (string, error) {
	if m := req.Params.Model; m != "" {
		return m, nil
	}
	if c.model != "" {
		return c.model, nil
	}
	return "", provider.Refused(name, nil, "no model named: set the recipe's model.name or the provider's default model")
}

// toolText is the text a tool result is sent as: Chat Completions and the
// Responses API have no error flag on tool results, so a failed one says so
// in its text.
func toolText(m conversation.Message) string {
	text := m.ResultText()
	if m.IsError && !strings.HasPrefix(strings.ToLower(text), "error") {
		text = errorPrefix + text
	}
	return text
}

// messages maps the system prompt and the provider view, in order.
func messages(req *llm.Request) ([]oai.ChatCompletionMessageParamUnion, error) {
	out := make([]oai.ChatCompletionMessageParamUnion, 0, len(req.Messages)+1)
	if req.System != "" {
		out = append(out, oai.SystemMessage(req.System))
	}
	for i, m := range req.Messages {
		switch m.Role {
		case conversation.MessageSystem:
			// Corrections mid-conversation stay system messages.
			out = append(out, oai.SystemMessage(m.Text()))
		case conversation.MessageUser:
			out = append(out, oai.UserMessage(m.Text()))
		case conversation.MessageAssistant:
			if a, ok := assistantMessage(m); ok {
				out = append(out, a)
			}
		case conversation.MessageTool:
			out = append(out, oai.ToolMessage(toolText(m), m.ToolCallID))
		default:
			return nil, provider.Refused(name, nil, "messages[%d] has the unknown role %q", i, m.Role)
		}
	}
	return out, nil
}

// assistantMessage maps an assistant message: its text and tool calls.
// Reasoning is not sent back: Chat Completions has no field for it, and
// servers that stream reasoning_content refuse it in requests. Nor are the
// Responses API's items (reasoning, searches, citations; see
// assistantItems): Chat Completions takes no copy of them, so its payloads
// are not even read, and a request without hosted tools goes on with the
// text. A message with neither text nor calls (reasoning only) is dropped:
// providers refuse empty assistant messages.
func assistantMessage(m conversation.Message) (oai.ChatCompletionMessageParamUnion, bool) {
	var a oai.ChatCompletionAssistantMessageParam
	if text := m.Text(); text != "" {
		a.Content.OfString = oai.String(text)
	}
	for _, tc := range m.ToolCalls {
		args := string(tc.Arguments)
		if args == "" {
			args = "{}"
		}
		a.ToolCalls = append(a.ToolCalls, oai.ChatCompletionMessageToolCallUnionParam{
			OfFunction: &oai.ChatCompletionMessageFunctionToolCallParam{
				ID:       tc.ID,
				Function: oai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: args},
			},
		})
	}
	if !a.Content.OfString.Valid() && len(a.ToolCalls) == 0 {
		return oai.ChatCompletionMessageParamUnion{}, false
	}
	return oai.ChatCompletionMessageParamUnion{OfAssistant: &a}, true
}

// toolParam maps a tool definition to a function tool.
func toolParam(t llm.ToolDef) (oai.ChatCompletionToolUnionParam, error) {
	f := oai.FunctionDefinitionParam{Name: t.Name}
	if t.Description != "" {
		f.Description = oai.String(t.Description)
	}
	schema, err := schemaFields(t.Schema)
	if err != nil {
		return oai.ChatCompletionToolUnionParam{}, err
	}
	if schema != nil {
		f.Parameters = schema
	}
	return oai.ChatCompletionFunctionTool(f), nil
}

// schemaFields splits a tool's JSON schema into its top-level fields, nil
// when there is no schema. The values stay raw JSON, exactly as written
// (decoding them to Go values would turn 200 into 2e+02, and the SDK sends
// json.Number as a string).
func schemaFields(raw json.RawMessage) (map[string]any, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return nil, errors.New("the schema must be a JSON object")
	}
	schema := make(map[string]any, len(fields))
	for k, v := range fields {
		schema[k] = v
	}
	return schema, nil
}
