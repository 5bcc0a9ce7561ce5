package anthropic

import (
	"encoding/json"
	"fmt"
	"slices"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/llm/provider"
)

// webSearch names Anthropic's web search server tool: in recipes
// (model.hosted_tools), in server_tool_use blocks and in hosted activity.
const webSearch = "web_search"

// hostedTools maps the request's hosted tool names to server tools. A name
// it does not know is refused before anything is sent: a recipe asking for
// a tool must not run without it. A name given twice is asked for once.
func hostedTools(names []string, tools []llm.ToolDef) ([]sdk.ToolUnionParam, error) {
	var out []sdk.ToolUnionParam
	var seen []string
	for _, n := range names {
		if n != webSearch {
			return nil, provider.Refused(name, nil, "model.hosted_tools: %q is not a hosted tool of anthropic (supported: %s)", n, webSearch)
		}
		if slices.Contains(seen, n) {
			continue
		}
		seen = append(seen, n)
		if i := slices.IndexFunc(tools, func(t llm.ToolDef) bool { return t.Name == n }); i >= 0 {
			return nil, provider.Refused(name, nil, "tools[%d] %q: the name is the hosted %s tool's; rename the tool or remove %s from model.hosted_tools", i, n, n, n)
		}
		out = append(out, sdk.ToolUnionParam{OfWebSearchTool20250305: &sdk.WebSearchTool20250305Param{}})
	}
	return out, nil
}

// searchStarted is the started state of the web search of a
// server_tool_use block: its id, the query the model wrote (input, as JSON;
// a JSON string of the text when the model wrote invalid JSON, which the
// conversation log would refuse) and the block as received (native), to
// be sent back in its place; a block that cannot be rebuilt (its input is
// not JSON) has no payload, and its search is not sent back.
func searchStarted(id, input string, native json.RawMessage) *conversation.HostedActivity {
	raw := json.RawMessage(input)
	if !json.Valid(raw) {
		raw, _ = json.Marshal(input)
	}
	h := &conversation.HostedActivity{ActivityID: id, Name: webSearch, State: conversation.ActivityStarted, Input: raw}
	if native != nil {
		h.Payload = &conversation.ProviderPayload{Provider: name, Format: formatSearchUse, Version: webSearchVersion, Value: native}
	}
	return h
}

// searchEnded is the terminal state of a web search from its
// web_search_tool_result block, raw as sent: completed with the number of
// results, or failed with the error code of an error object. The block goes
// whole into the payload so that it can be replayed to Anthropic exactly;
// it holds web content and is never rendered or logged.
func searchEnded(id, raw string) *conversation.HostedActivity {
	h := &conversation.HostedActivity{
		ActivityID: id, Name: webSearch, State: conversation.ActivityCompleted,
		Payload: &conversation.ProviderPayload{Provider: name, Format: formatSearchResult, Version: webSearchVersion, Value: json.RawMessage(raw)},
	}
	var block struct {
		Content json.RawMessage `json:"content"`
	}
	_ = json.Unmarshal([]byte(raw), &block)
	var results []struct {
		Type string `json:"type"`
	}
	var failure struct {
		Type      string `json:"type"`
		ErrorCode string `json:"error_code"`
	}
	switch {
	case json.Unmarshal(block.Content, &results) == nil:
		n := 0
		for _, r := range results {
			if r.Type == "web_search_result" {
				n++
			}
		}
		h.Summary = countResults(n)
	case json.Unmarshal(block.Content, &failure) == nil && failure.Type == "web_search_tool_result_error":
		h.State = conversation.ActivityFailed
		h.Summary = failure.ErrorCode
		if h.Summary == "" {
			h.Summary = "the search failed"
		}
	}
	// Content of another shape (a newer version's) ends the search too; its
	// payload carries it.
	return h
}

// countResults reads like "1 result" or "3 results".
func countResults(n int) string {
	switch n {
	case 0:
		return "no results"
	case 1:
		return "1 result"
	}
	return fmt.Sprintf("%d results", n)
}

// hostedUsage is the hosted request counts of s, nil when there are none.
// Web fetch and other server tools are not requested by this adapter.
func hostedUsage(s sdk.ServerToolUsage) map[string]int {
	if s.WebSearchRequests > 0 {
		return map[string]int{webSearch: int(s.WebSearchRequests)}
	}
	return nil
}
