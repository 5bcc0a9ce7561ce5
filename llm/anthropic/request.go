package anthropic

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/llm/provider"
)

// correctionPrefix starts the text of a system message that arrives in the
// middle of a conversation: the Messages API has one system prompt and only
// user and assistant turns, so a correction goes as user text.
const correctionPrefix = "[system] "

// rawArgument is the key under which tool call arguments that are not a
// JSON object are replayed: tool_use input must be an object.
const rawArgument = "_raw"

// params maps req to a Messages request, with the request options of
// settings the SDK has no field for.
func (c *Client) params(req *llm.Request) (sdk.MessageNewParams, []option.RequestOption, error) {
	var p sdk.MessageNewParams
	p.Model = sdk.Model(req.Params.Model)
	if p.Model == "" {
		p.Model = sdk.Model(c.model)
	}
	if p.Model == "" {
		return p, nil, provider.Refused(name, nil, "no model named: set the recipe's model.name or the provider's default model")
	}
	hosted, err := hostedTools(req.Params.HostedTools, req.Tools)
	if err != nil {
		return p, nil, err
	}
	p.MaxTokens = int64(c.maxTokens)
	if n := req.Params.MaxTokens; n > 0 {
		p.MaxTokens = int64(n)
	}
	if req.System != "" {
		p.System = []sdk.TextBlockParam{{Text: req.System}}
	}
	msgs, err := messages(req.Messages)
	if err != nil {
		return p, nil, err
	}
	p.Messages = msgs
	for i, t := range req.Tools {
		tool, err := toolParam(t)
		if err != nil {
			return p, nil, provider.Refused(name, err, "tools[%d] %q: %v", i, t.Name, err)
		}
		p.Tools = append(p.Tools, tool)
	}
	p.Tools = append(p.Tools, hosted...)
	markCache(&p)
	var opts []option.RequestOption
	if t := req.Params.Temperature; t != nil {
		// The SDK's params have no temperature field; the API takes one.
		opts = append(opts, option.WithJSONSet("temperature", *t))
	}
	return p, opts, nil
}

// markCache asks the API to cache the prompt up to two breakpoints: the
// system prompt (with the tools before it, the same on every call of a
// recipe) and the last block of the last user turn (the whole conversation
// so far, which the next call begins with). A turn usually makes several
// calls (a tool round, then respond) and the next turn often comes within
// the cache's five minutes, so the cache is read (at ~10 % of the input
// price) more often than written (at 125 %); a prompt shorter than the
// model's minimum is simply not cached. The other providers cache prefixes
// by themselves; conversation.Fit keeps the prefix still while a
// conversation grows.
func markCache(p *sdk.MessageNewParams) {
	ephemeral := sdk.NewCacheControlEphemeralParam()
	if n := len(p.System); n > 0 {
		p.System[n-1].CacheControl = ephemeral
	}
	n := len(p.Messages)
	if n == 0 || p.Messages[n-1].OfUser == nil {
		return
	}
	blocks := p.Messages[n-1].OfUser.Content
	if len(blocks) == 0 {
		return
	}
	if cc := blocks[len(blocks)-1].GetCacheControl(); cc != nil {
		*cc = ephemeral
	}
}

// turn is a message being built: the Messages API wants user and assistant
// turns strictly alternating, so consecutive messages of one role share a
// turn.
type turn struct {
	user   bool
	blocks []sdk.ContentBlockParamUnion
}

// messages maps the provider view, in order, merging consecutive messages
// of one role. Messages with nothing to send are dropped: the API refuses
// empty turns and empty text blocks.
func messages(view []conversation.Message) ([]sdk.MessageParam, error) {
	var turns []turn
	add := func(user bool, blocks ...sdk.ContentBlockParamUnion) {
		if len(blocks) == 0 {
			return
		}
		if n := len(turns); n > 0 && turns[n-1].user == user {
			turns[n-1].blocks = append(turns[n-1].blocks, blocks...)
			return
		}
		turns = append(turns, turn{user: user, blocks: blocks})
	}
	for i, m := range view {
		switch m.Role {
		case conversation.MessageSystem:
			if text := m.Text(); text != "" {
				add(true, sdk.NewTextBlock(correctionPrefix+text))
			}
		case conversation.MessageUser:
			if text := m.Text(); text != "" {
				add(true, sdk.NewTextBlock(text))
			}
		case conversation.MessageAssistant:
			blocks, err := assistantBlocks(i, m)
			if err != nil {
				return nil, err
			}
			add(false, blocks...)
		case conversation.MessageTool:
			add(true, toolResult(m))
		default:
			return nil, provider.Refused(name, nil, "messages[%d] has the unknown role %q", i, m.Role)
		}
	}
	out := make([]sdk.MessageParam, 0, len(turns))
	for _, t := range turns {
		if t.user {
			out = append(out, sdk.NewUserMessage(resultsFirst(t.blocks)...))
		} else {
			out = append(out, sdk.NewAssistantMessage(t.blocks...))
		}
	}
	return out, nil
}

// resultsFirst moves a user turn's tool_result blocks before its other
// blocks, keeping the order within each group: the API wants the results
// of the previous turn's calls first.
func resultsFirst(blocks []sdk.ContentBlockParamUnion) []sdk.ContentBlockParamUnion {
	return provider.FirstThose(blocks, func(b sdk.ContentBlockParamUnion) bool { return b.OfToolResult != nil })
}

// toolInput is a call's arguments as a tool_use input: the object as it was
// sent, "{}" for none, and anything else (invalid JSON, an array) wrapped as
// {"_raw": "<text>"} so that the model sees what it wrote.
func toolInput(args json.RawMessage) any {
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) == 0 {
		return json.RawMessage("{}")
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(trimmed, &obj) == nil && obj != nil {
		return json.RawMessage(trimmed)
	}
	return map[string]string{rawArgument: string(args)}
}

// toolResult maps a tool message to a tool_result block.
func toolResult(m conversation.Message) sdk.ContentBlockParamUnion {
	return sdk.NewToolResultBlock(m.ToolCallID, m.ResultText(), m.IsError)
}

// toolParam maps a tool definition. The schema's values go out as raw JSON,
// exactly as written (decoding them would turn 200 into 2e+02).
func toolParam(t llm.ToolDef) (sdk.ToolUnionParam, error) {
	var schema sdk.ToolInputSchemaParam
	if len(bytes.TrimSpace(t.Schema)) > 0 {
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(t.Schema, &fields); err != nil || fields == nil {
			return sdk.ToolUnionParam{}, errors.New("the schema must be a JSON object")
		}
		for k, v := range fields {
			switch k {
			case "type":
				var typ string
				if json.Unmarshal(v, &typ) != nil || typ != "object" {
					return sdk.ToolUnionParam{}, fmt.Errorf(`the schema's type must be "object" (got %s)`, v)
				}
			case "properties":
				schema.Properties = v
			case "required":
				if err := json.Unmarshal(v, &schema.Required); err != nil {
					return sdk.ToolUnionParam{}, fmt.Errorf("the schema's required must be a list of names (got %s)", v)
				}
			default:
				if schema.ExtraFields == nil {
					schema.ExtraFields = make(map[string]any)
				}
				schema.ExtraFields[k] = v
			}
		}
	}
	if schema.Properties == nil {
		// The API requires input_schema, and the SDK leaves out a zero one.
		schema.Properties = json.RawMessage("{}")
	}
	tool := sdk.ToolUnionParamOfTool(schema, t.Name)
	if t.Description != "" {
		tool.OfTool.Description = sdk.String(t.Description)
	}
	return tool, nil
}
