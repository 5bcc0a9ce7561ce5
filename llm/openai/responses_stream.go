package openai

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/openai/openai-go/v3/responses"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/llm"
)

// responseAssembler turns the typed events of one streamed Responses API
// answer into parts:
//
//   - text deltas (and refusals) go out as they arrive;
//   - a reasoning item goes out whole when it is done, its summary as text
//     and the item, with its encrypted content, as a payload for replay;
//   - a web_search_call item is hosted activity: started when it appears,
//     completed or failed when it is done, that final state keeping the
//     item for replay;
//   - url_citation annotations go out as citations when their message is
//     done, their character offsets turned into byte offsets of the text,
//     each keeping the annotation for replay;
//   - function calls are gathered from their deltas, each delta going out
//     as a fragment of the call's arguments as it arrives, and go out
//     whole, with usage and the finish reason, by end. The arguments of a
//     call's done events, when sent, stand for the deltas joined.
//
// Event and item kinds it does not know are skipped.
type responseAssembler struct {
	c *Client // for the errors of failure events

	calls  []*callDraft          // in order of first appearance
	byItem map[string]*callDraft // the call each item is building

	searches map[string]*searchState // web_search_call items by item key
	order    []string                // search keys in order of appearance
	searched int                     // web searches completed

	texts *textParts

	usage  *llm.Usage
	status string // "completed" or "incomplete"; "" until the answer ended
	reason string // why an incomplete answer stopped
}

// searchState is what is known of one web_search_call item.
type searchState struct {
	id             string // the activity id
	started, ended bool   // the states already yielded
	sawCompleted   bool   // a response.web_search_call.completed event came
	input          json.RawMessage
}

// add takes one event and returns the parts it completes, in order, or the
// failure a response.failed or error event reports.
func (a *responseAssembler) add(ev *responses.ResponseStreamEventUnion) ([]llm.Part, error) {
	switch ev.Type {
	case "response.output_text.delta", "response.refusal.delta":
		if ev.Delta == "" {
			return nil, nil
		}
		a.textParts().add(itemKey(ev.ItemID, ev.OutputIndex), ev.ContentIndex, ev.Delta)
		return []llm.Part{{Kind: llm.PartText, Text: ev.Delta}}, nil
	case "response.output_text.annotation.added":
		an := ev.Annotation
		a.textParts().annotate(itemKey(ev.ItemID, ev.OutputIndex), ev.ContentIndex, ev.AnnotationIndex, annotation{
			kind: an.Type, url: an.URL, title: an.Title, start: an.StartIndex, end: an.EndIndex,
			ranged: an.JSON.StartIndex.Valid() && an.JSON.EndIndex.Valid(), raw: an.RawJSON(),
		})
	case "response.output_item.added":
		return a.itemAdded(&ev.Item, ev.OutputIndex), nil
	case "response.output_item.done":
		return a.itemDone(&ev.Item, ev.OutputIndex), nil
	case "response.function_call_arguments.delta":
		if c := a.byItem[itemKey(ev.ItemID, ev.OutputIndex)]; c != nil {
			return c.fragment(ev.Delta), nil
		}
	case "response.function_call_arguments.done":
		if c := a.byItem[itemKey(ev.ItemID, ev.OutputIndex)]; c != nil && ev.JSON.Arguments.Valid() {
			c.args.Reset()
			c.args.WriteString(ev.Arguments)
		}
	case "response.web_search_call.in_progress", "response.web_search_call.searching":
		return a.searchStarted(itemKey(ev.ItemID, ev.OutputIndex), ev.ItemID, nil), nil
	case "response.web_search_call.completed":
		key := itemKey(ev.ItemID, ev.OutputIndex)
		parts := a.searchStarted(key, ev.ItemID, nil)
		a.searches[key].sawCompleted = true
		return parts, nil
	case "response.completed", "response.incomplete":
		a.status = strings.TrimPrefix(ev.Type, "response.")
		a.reason = ev.Response.IncompleteDetails.Reason
		if u := ev.Response.Usage; ev.Response.JSON.Usage.Valid() {
			a.usage = &llm.Usage{InputTokens: int(u.InputTokens), OutputTokens: int(u.OutputTokens)}
		}
	case "response.failed":
		e := ev.Response.Error
		return nil, a.c.eventError(string(e.Code), e.Message, "the response failed")
	case "error":
		return nil, a.c.eventError(ev.Code, ev.Message, "error event in the stream")
	}
	return nil, nil
}

// itemAdded handles a new output item: a function call starts a draft
// (arguments it comes with go out as a fragment), a web search starts an
// activity.
func (a *responseAssembler) itemAdded(item *responses.ResponseOutputItemUnion, index int64) []llm.Part {
	key := itemKey(item.ID, index)
	switch item.Type {
	case "function_call":
		return a.call(key, item).fragment(item.Arguments.OfString)
	case "web_search_call":
		return a.searchStarted(key, item.ID, item)
	}
	return nil
}

// itemDone handles a finished output item.
func (a *responseAssembler) itemDone(item *responses.ResponseOutputItemUnion, index int64) []llm.Part {
	key := itemKey(item.ID, index)
	switch item.Type {
	case "function_call":
		c := a.call(key, item)
		if args := item.Arguments.OfString; args != "" {
			c.args.Reset()
			c.args.WriteString(args)
		}
	case "web_search_call":
		out := a.searchStarted(key, item.ID, item)
		state := conversation.ActivityCompleted
		if item.Status == "failed" || item.Status == "incomplete" {
			state = conversation.ActivityFailed
		}
		end := a.searchEnded(a.searches[key], state)
		if item.ID != "" {
			// The item goes back as it came, in its place (see searchItems);
			// without its id the API would not take it.
			end.Hosted.Payload = newPayload(formatWebSearchCall, versionWebSearchCall, item.RawJSON())
		}
		return append(out, end)
	case "reasoning":
		if p, ok := reasoningOf(item); ok {
			return []llm.Part{p}
		}
	case "message":
		return a.textParts().done(key, item)
	}
	return nil
}

// call returns the draft of the function call item key, started from what
// item says of it.
func (a *responseAssembler) call(key string, item *responses.ResponseOutputItemUnion) *callDraft {
	if a.byItem == nil {
		a.byItem = make(map[string]*callDraft)
	}
	c := a.byItem[key]
	if c == nil {
		c = newCall(&a.calls)
		a.byItem[key] = c
	}
	if item.CallID != "" && !c.streamed {
		c.id = item.CallID
	}
	if item.Name != "" {
		c.name = item.Name
	}
	return c
}

// searchStarted records the web search key (item, when known, tells its
// query) and returns its started state the first time.
func (a *responseAssembler) searchStarted(key, id string, item *responses.ResponseOutputItemUnion) []llm.Part {
	if a.searches == nil {
		a.searches = make(map[string]*searchState)
	}
	s := a.searches[key]
	if s == nil {
		if id == "" {
			id = key
		}
		s = &searchState{id: id}
		a.searches[key] = s
		a.order = append(a.order, key)
	}
	if item != nil && item.Action.Query != "" {
		s.input, _ = json.Marshal(map[string]string{"query": item.Action.Query}) // a string map always encodes
	}
	if s.started {
		return nil
	}
	s.started = true
	return []llm.Part{a.hosted(s, conversation.ActivityStarted)}
}

// searchEnded returns the final state of search s.
func (a *responseAssembler) searchEnded(s *searchState, state conversation.ActivityState) llm.Part {
	s.ended = true
	if state == conversation.ActivityCompleted {
		a.searched++
	}
	return a.hosted(s, state)
}

func (a *responseAssembler) hosted(s *searchState, state conversation.ActivityState) llm.Part {
	return llm.Part{Kind: llm.PartHosted, Hosted: &conversation.HostedActivity{
		ActivityID: s.id, Name: hostedWebSearch, State: state, Input: s.input,
	}}
}

func (a *responseAssembler) textParts() *textParts {
	if a.texts == nil {
		a.texts = &textParts{}
	}
	return a.texts
}

// finished reports whether the response completed or stopped incomplete:
// only then is the answer whole.
func (a *responseAssembler) finished() bool { return a.status != "" }

// end returns the parts that close the answer: citations not yet sent, the
// final state of searches the stream left open, the function calls, usage
// with the searches done, the finish reason.
func (a *responseAssembler) end() []llm.Part {
	out := a.textParts().rest()
	for _, key := range a.order {
		s := a.searches[key]
		if s.ended {
			continue
		}
		state := conversation.ActivityFailed
		if s.sawCompleted {
			state = conversation.ActivityCompleted
		}
		out = append(out, a.searchEnded(s, state))
	}
	for _, c := range a.calls {
		out = append(out, c.part())
	}
	if a.usage != nil || a.searched > 0 {
		u := llm.Usage{}
		if a.usage != nil {
			u = *a.usage
		}
		if a.searched > 0 {
			u.Hosted = map[string]int{hostedWebSearch: a.searched}
		}
		out = append(out, llm.Part{Kind: llm.PartUsage, Usage: &u})
	}
	return append(out, llm.Part{Kind: llm.PartFinish, Finish: responseFinish(a.reason, len(a.calls) > 0)})
}

// responseFinish maps why a response ended: the reason of an incomplete
// one, else function calls or a normal stop.
func responseFinish(incomplete string, calls bool) llm.FinishReason {
	switch {
	case incomplete == "max_output_tokens":
		return llm.FinishLength
	case incomplete == "content_filter":
		return llm.FinishFiltered
	case calls:
		return llm.FinishToolCalls
	}
	return llm.FinishStop
}

// reasoningOf maps a finished reasoning item: its summary (or, from
// servers that send it, its reasoning text), and the item itself, kept for
// replay when it has its encrypted content. ok is false when the item
// carries neither.
func reasoningOf(item *responses.ResponseOutputItemUnion) (p llm.Part, ok bool) {
	var texts []string
	for _, s := range item.Summary {
		if s.Text != "" {
			texts = append(texts, s.Text)
		}
	}
	if len(texts) == 0 {
		for _, c := range item.Content {
			if c.Type == "reasoning_text" && c.Text != "" {
				texts = append(texts, c.Text)
			}
		}
	}
	r := conversation.Reasoning{Text: strings.Join(texts, "\n\n")}
	if item.EncryptedContent != "" && item.ID != "" {
		// With nothing stored on OpenAI's side (store=false), the item goes
		// back as it came; without its encrypted content it cannot.
		r.Payload = newPayload(formatReasoning, versionReasoning, item.RawJSON())
	}
	if r.Text == "" && r.Payload == nil {
		return p, false
	}
	return llm.Part{Kind: llm.PartReasoning, Reasoning: &r}, true
}

// itemKey names an output item by its id, or by its place in the output
// when a server sends no id.
func itemKey(id string, index int64) string {
	if id != "" {
		return id
	}
	return fmt.Sprintf("output_%d", index)
}
