package openai

import (
	"slices"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/llm/provider"
)

// hostedWebSearch is the hosted tool this adapter knows, by its name in
// llm.Params.HostedTools and in the Responses API alike.
const hostedWebSearch = "web_search"

// responseParams maps req, a request with hosted tools, to a Responses API
// request. Nothing is stored on OpenAI's side (store=false): every request
// carries the whole conversation, as Chat Completions requests do.
func (c *Client) responseParams(req *llm.Request) (responses.ResponseNewParams, error) {
	var p responses.ResponseNewParams
	model, err := c.modelFor(req)
	if err != nil {
		return p, err
	}
	p.Model = model
	p.Store = oai.Bool(false)
	if req.System != "" {
		p.Instructions = oai.String(req.System)
	}
	items, err := inputItems(req.Messages)
	if err != nil {
		return p, err
	}
	p.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: items}

	for i, t := range req.Tools {
		schema, err := schemaFields(t.Schema)
		if err != nil {
			return p, provider.Refused(name, err, "tools[%d] %q: %v", i, t.Name, err)
		}
		if schema == nil {
			// The Responses API requires parameters; this schema takes none.
			schema = map[string]any{"type": "object", "properties": map[string]any{}}
		}
		// Not strict: strict mode asks for schemas of a restricted form
		// (every property required, no additionalProperties) that tools do
		// not promise; the engine checks arguments itself.
		tool := responses.ToolParamOfFunction(t.Name, schema, false)
		if t.Description != "" {
			tool.OfFunction.Description = oai.String(t.Description)
		}
		p.Tools = append(p.Tools, tool)
	}
	seen := map[string]bool{}
	for _, h := range req.Params.HostedTools {
		if seen[h] {
			continue
		}
		seen[h] = true
		if h != hostedWebSearch {
			return p, provider.Refused(name, nil, "hosted tool %q is unknown to the OpenAI adapter; it knows %q", h, hostedWebSearch)
		}
		if i := slices.IndexFunc(req.Tools, func(t llm.ToolDef) bool { return t.Name == h }); i >= 0 {
			return p, provider.Refused(name, nil, "tools[%d] %q: the name is the hosted %s tool's; rename the tool or remove %s from model.hosted_tools", i, h, h, h)
		}
		p.Tools = append(p.Tools, responses.ToolParamOfWebSearch(responses.WebSearchToolTypeWebSearch))
	}

	if t := req.Params.Temperature; t != nil {
		p.Temperature = oai.Float(*t)
	}
	if n := req.Params.MaxTokens; n > 0 {
		p.MaxOutputTokens = oai.Int(int64(n))
	}
	return p, nil
}

// inputItems maps the provider view to input items, in order: user and
// system messages as input messages, an assistant message as the items it
// came as (see assistantItems), a tool result as a function call output.
func inputItems(msgs []conversation.Message) (responses.ResponseInputParam, error) {
	out := make(responses.ResponseInputParam, 0, len(msgs))
	for i, m := range msgs {
		switch m.Role {
		case conversation.MessageSystem:
			// Corrections mid-conversation stay system messages.
			out = append(out, responses.ResponseInputItemParamOfMessage(m.Text(), responses.EasyInputMessageRoleSystem))
		case conversation.MessageUser:
			out = append(out, responses.ResponseInputItemParamOfMessage(m.Text(), responses.EasyInputMessageRoleUser))
		case conversation.MessageAssistant:
			items, err := assistantItems(m)
			if err != nil {
				return nil, provider.Unsendable(name, "messages[%d].%v", i, err)
			}
			out = append(out, items...)
		case conversation.MessageTool:
			item := responses.ResponseInputItemParamOfFunctionCallOutput(toolText(m))
			item.OfFunctionCallOutput.CallID = oai.String(m.ToolCallID)
			out = append(out, item)
		default:
			return nil, provider.Refused(name, nil, "messages[%d] has the unknown role %q", i, m.Role)
		}
	}
	return out, nil
}
