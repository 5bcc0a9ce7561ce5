package openai

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/llm/llmtest"
)

// The recorded search of a reasoning model: a reasoning item, a
// web_search_call item, then a message citing one source.
const (
	reasoningSearch = "responses_reasoning_search.sse"
	louvreSearchID  = "ws_68f2a1c3f1a48190c2d3e4f5a6b7c8d9"
	louvreText      = "The Louvre opens at 9:00 — it closes at 18:00, and at 21:00 on Fridays " +
		"([louvre.fr](https://www.louvre.fr/en/visit/hours-admission?utm_source=openai))."
	louvreURL   = "https://www.louvre.fr/en/visit/hours-admission?utm_source=openai"
	louvreTitle = "Hours, admission & directions – Louvre"
)

// reasoningSearchAnswer is what the recorded search collects to: every
// item and annotation kept as received.
func reasoningSearchAnswer(t *testing.T) llm.Response {
	item := func(n int) string { return recorded(t, reasoningSearch, "response.output_item.done", "item", n) }
	return llm.Response{
		Text: louvreText,
		Reasoning: []conversation.Reasoning{{
			Text:    "**Looking up opening hours**\n\nThe user wants today's Louvre hours; I should search the web.",
			Payload: reasoningKept(item(0)),
		}},
		Hosted: []conversation.HostedActivity{
			*hostedPart(louvreSearchID, conversation.ActivityStarted, "").Hosted,
			*endedPart(louvreSearchID, conversation.ActivityCompleted, `{"query":"Louvre opening hours"}`, item(1)).Hosted,
		},
		// OpenAI's characters 71-150; "—" takes three bytes.
		Citations: []conversation.Citation{*citationPart(louvreURL, louvreTitle, 73, 152,
			recorded(t, reasoningSearch, "response.output_text.annotation.added", "annotation", 0)).Citation},
		Usage:  llm.Usage{InputTokens: 9127, OutputTokens: 212, Hosted: map[string]int{"web_search": 1}},
		Finish: llm.FinishStop,
	}
}

// TestSearchTurnReplay plays a turn with a hosted search, logs it as the
// engine does, and checks what the next request sends back of it.
func TestSearchTurnReplay(t *testing.T) {
	t.Parallel()
	user := func(s string) any { return map[string]any{"role": "user", "content": s} }
	message := func(annotations ...any) any {
		return map[string]any{"type": "message", "role": "assistant", "status": "completed", "content": []any{
			map[string]any{"type": "output_text", "text": louvreText, "annotations": append([]any{}, annotations...)},
		}}
	}
	asJSON := func(raw string) any {
		var v any
		if err := json.Unmarshal([]byte(raw), &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	received := func(typ, field string, n int) any { return asJSON(recorded(t, reasoningSearch, typ, field, n)) }
	tests := []struct {
		name     string
		provider string // whose the answer's payloads are said to be
		want     []any  // the input items of the next request
	}{
		{
			name: "the reasoning, the search and the annotated message go back as received, in order", provider: "openai",
			want: []any{
				user("When does the Louvre open?"),
				received("response.output_item.done", "item", 0), // reasoning
				received("response.output_item.done", "item", 1), // web_search_call
				message(received("response.output_text.annotation.added", "annotation", 0)),
				user("And on Sundays?"),
			},
		},
		{
			name: "after a switch from another provider, the text alone", provider: "anthropic",
			want: []any{user("When does the Louvre open?"), message(), user("And on Sundays?")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, Config{}, llmtest.Streamed(t, reasoningSearch), llmtest.Streamed(t, "responses_text.sse"))
			first, err := llm.Collect(b.client.Generate(context.Background(), searchRequest("When does the Louvre open?")))
			if err != nil {
				t.Fatal(err)
			}
			label := func(p *conversation.ProviderPayload) *conversation.ProviderPayload {
				c := *p
				c.Provider = tt.provider
				return &c
			}
			// The log, as the round loop writes it.
			events := []conversation.Event{conversation.NewInboxMessage("m1", conversation.KindUser, "", "When does the Louvre open?")}
			for _, h := range first.Hosted {
				if h.Payload != nil {
					h.Payload = label(h.Payload)
				}
				events = append(events, conversation.NewHostedActivity(h))
			}
			for _, r := range first.Reasoning {
				events = append(events, conversation.NewReasoning(r.Text, r.Signature, label(r.Payload)))
			}
			for i := range first.Citations {
				first.Citations[i].Replay = label(first.Citations[i].Replay)
			}
			events = append(events, conversation.NewChatMessage(first.Text, first.Citations...),
				conversation.NewInboxMessage("m2", conversation.KindUser, "", "And on Sundays?"))

			next := searchRequest("")
			next.Messages = conversation.ProviderView(events)
			if _, err := llm.Collect(b.client.Generate(context.Background(), next)); err != nil {
				t.Fatal(err)
			}
			var body struct {
				Input []any `json:"input"`
			}
			if err := json.Unmarshal(b.fake.Requests()[1].Body, &body); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, body.Input); diff != "" {
				t.Errorf("input items (-want +got):\n%s", diff)
			}
		})
	}
}

// own is a payload of this adapter.
func own(format, version, value string) *conversation.ProviderPayload {
	return &conversation.ProviderPayload{Provider: "openai", Format: format, Version: version, Value: json.RawMessage(value)}
}

// Payloads of each format, as the Responses API sent their objects.
const (
	wsItem = `{"id":"ws_1","type":"web_search_call","status":"completed","action":{"type":"search","query":"Eiffelturm Höhe"}}`
	rsItem = `{"id":"rs_1","type":"reasoning","summary":[],"encrypted_content":"gAAAA-enc"}`
)

// wsPayload keeps wsItem.
func wsPayload() *conversation.ProviderPayload {
	return own("web_search_call", "responses.item.v1", wsItem)
}

// rsPayload keeps rsItem.
func rsPayload() *conversation.ProviderPayload {
	return own("reasoning", "responses.item.v1", rsItem)
}

// wikiCitation cites the Eiffelturm article over [start, end) bytes of its
// message's text; raw is its annotation as received.
func wikiCitation(start, end int, raw string) conversation.Citation {
	return conversation.Citation{
		Source: conversation.Source{URL: "https://de.wikipedia.org/wiki/Eiffelturm"},
		Range:  &conversation.Range{Start: start, End: end},
		Replay: own("url_citation", "responses.annotation.v1", raw),
	}
}

// TestAssistantItems checks the items an assistant message of the view is
// sent back as: searches placed in the text by TextAt, annotations counted
// in the characters of the message they go with, other providers' payloads
// left out.
func TestAssistantItems(t *testing.T) {
	t.Parallel()
	const wiki = `{"type":"url_citation","start_index":13,"end_index":19,"url":"https://de.wikipedia.org/wiki/Eiffelturm","title":"Eiffelturm"}`
	started := conversation.HostedActivity{ActivityID: "ws_1", Name: "web_search", State: conversation.ActivityStarted}
	ended := func(at int, p *conversation.ProviderPayload) conversation.HostedActivity {
		return conversation.HostedActivity{ActivityID: "ws_1", Name: "web_search", State: conversation.ActivityCompleted, Payload: p, TextAt: at}
	}
	elsewhere := func(p *conversation.ProviderPayload) *conversation.ProviderPayload {
		c := *p
		c.Provider = "anthropic"
		return &c
	}
	tests := []struct {
		name string
		m    conversation.Message
		want string // the items as JSON
	}{
		{
			name: "a search amid the text cuts it, each part with its own annotations",
			m: conversation.Message{
				Content: text("Let me look. Größe: 330 m (wiki)"),
				Hosted:  []conversation.HostedActivity{started, ended(13, wsPayload())},
				// "Let me look. " is 13 bytes, "Größe: 330 m " 15 more.
				Citations: []conversation.Citation{wikiCitation(28, 34, wiki)},
			},
			want: `[
				{"type":"message","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Let me look. ","annotations":[]}]},
				` + wsItem + `,
				{"type":"message","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Größe: 330 m (wiki)","annotations":[` + wiki + `]}]}
			]`,
		},
		{
			name: "annotations are counted in the text they are sent with",
			m: conversation.Message{
				// Two responses of one message: "Hi.\n" comes before the cited
				// part, which the annotation counted from.
				Content:   append(text("Hi."), conversation.TextBlock("Größe (wiki)")),
				Citations: []conversation.Citation{wikiCitation(4+8, 4+14, strings.ReplaceAll(strings.ReplaceAll(wiki, ":13", ":6"), ":19", ":12"))},
			},
			want: `[{"type":"message","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Hi.\nGröße (wiki)","annotations":[
				{"type":"url_citation","start_index":10,"end_index":16,"url":"https://de.wikipedia.org/wiki/Eiffelturm","title":"Eiffelturm"}]}]}]`,
		},
		{
			name: "reasoning first, a search after the text, calls last; a citation without a range has no place",
			m: conversation.Message{
				Content:   text("Done."),
				Reasoning: []conversation.Reasoning{{Text: "summary", Payload: rsPayload()}, {Text: "a compatible server's"}},
				Hosted:    []conversation.HostedActivity{ended(5, wsPayload())},
				Citations: []conversation.Citation{{Source: conversation.Source{URL: "https://x.test"}, Replay: own("url_citation", "responses.annotation.v1", wiki)}},
				ToolCalls: []conversation.ToolCall{{ID: "call_1", Name: "get_time"}},
			},
			want: `[` + rsItem + `,
				{"type":"message","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Done.","annotations":[]}]},
				` + wsItem + `,
				{"type":"function_call","call_id":"call_1","name":"get_time","arguments":"{}"}]`,
		},
		{
			name: "another provider's payloads are left out, the text is sent",
			m: conversation.Message{
				Content:   text("Let me look. Größe: 330 m (wiki)"),
				Reasoning: []conversation.Reasoning{{Text: "summary", Payload: elsewhere(rsPayload())}},
				Hosted:    []conversation.HostedActivity{ended(13, elsewhere(wsPayload()))},
				Citations: []conversation.Citation{{Range: &conversation.Range{Start: 28, End: 34}, Replay: elsewhere(wikiCitation(28, 34, wiki).Replay)}},
			},
			want: `[{"type":"message","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Let me look. Größe: 330 m (wiki)","annotations":[]}]}]`,
		},
		{
			name: "reasoning and searches alone give nothing",
			m: conversation.Message{
				Reasoning: []conversation.Reasoning{{Payload: rsPayload()}},
				Hosted:    []conversation.HostedActivity{ended(0, wsPayload())},
			},
			want: `null`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.m.Role = conversation.MessageAssistant
			items, err := assistantItems(tt.m)
			if err != nil {
				t.Fatal(err)
			}
			body, err := json.Marshal(items)
			if err != nil {
				t.Fatal(err)
			}
			var got, want any
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(tt.want), &want); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("items (-want +got):\n%s", diff)
			}
		})
	}
}

// TestUnsendablePayloads checks that an own payload that cannot go back is
// refused before anything is sent, with an error that names its place, the
// provider and what is wrong; it never heals, so it is not retried.
func TestUnsendablePayloads(t *testing.T) {
	t.Parallel()
	future := func(p *conversation.ProviderPayload, version string) *conversation.ProviderPayload {
		p.Version = version
		return p
	}
	withReasoning := func(p *conversation.ProviderPayload) conversation.Message {
		return conversation.Message{Content: text("ok"), Reasoning: []conversation.Reasoning{{Text: "r", Payload: p}}}
	}
	withSearch := func(p *conversation.ProviderPayload) conversation.Message {
		return conversation.Message{Content: text("ok"), Hosted: []conversation.HostedActivity{
			{ActivityID: "ws_1", Name: "web_search", State: conversation.ActivityStarted},
			{ActivityID: "ws_1", Name: "web_search", State: conversation.ActivityCompleted, Payload: p},
		}}
	}
	withCitation := func(p *conversation.ProviderPayload) conversation.Message {
		return conversation.Message{Content: text("ok"), Citations: []conversation.Citation{{Range: &conversation.Range{Start: 0, End: 2}, Replay: p}}}
	}
	tests := []struct {
		name   string
		m      conversation.Message
		errHas string
	}{
		{
			name: "reasoning that does not decode", m: withReasoning(own("reasoning", "responses.item.v1", `12345`)),
			errHas: `messages[1].reasoning[0]: the openai reasoning payload (version "responses.item.v1") does not decode: json: cannot unmarshal number`,
		},
		{
			name: "reasoning of another type", m: withReasoning(own("reasoning", "responses.item.v1", `{"type":"message","id":"rs_1","encrypted_content":"e"}`)),
			errHas: `messages[1].reasoning[0]: the openai reasoning payload (version "responses.item.v1") does not decode: its type is "message"`,
		},
		{
			name: "reasoning without its encrypted content", m: withReasoning(own("reasoning", "responses.item.v1", `{"type":"reasoning","id":"rs_1","summary":[]}`)),
			errHas: `does not decode: "encrypted_content" is not a non-empty string`,
		},
		{
			name: "reasoning logged before versions, without its encrypted content", m: withReasoning(own("reasoning", "", `{"id":"rs_1"}`)),
			errHas: `messages[1].reasoning[0]: the openai reasoning payload (without a version) does not decode: it lacks the id or the encrypted_content`,
		},
		{
			name: "reasoning of a version to come", m: withReasoning(future(rsPayload(), "responses.item.v2")),
			errHas: `messages[1].reasoning[0]: the openai reasoning payload's version "responses.item.v2" is not one this adapter continues (it continues "responses.item.v1" and payloads without a version;`,
		},
		{
			name: "a search that does not decode", m: withSearch(own("web_search_call", "responses.item.v1", `"ws_1"`)),
			errHas: `messages[1].hosted[1]: the openai web_search_call payload (version "responses.item.v1") does not decode`,
		},
		{
			name: "a search without its id", m: withSearch(own("web_search_call", "responses.item.v1", `{"type":"web_search_call","status":"completed"}`)),
			errHas: `messages[1].hosted[1]: the openai web_search_call payload (version "responses.item.v1") does not decode: "id" is not a non-empty string`,
		},
		{
			name: "a search without a version", m: withSearch(future(wsPayload(), "")),
			errHas: `messages[1].hosted[1]: the openai web_search_call payload's version "" is not one this adapter continues (it continues "responses.item.v1";`,
		},
		{
			name: "hosted work of a format this adapter does not know", m: withSearch(own("code_interpreter_call", "responses.item.v1", `{}`)),
			errHas: `messages[1].hosted[1]: the openai payload's format "code_interpreter_call" is not one this adapter takes here (it takes "web_search_call";`,
		},
		{
			name: "a citation that does not decode", m: withCitation(own("url_citation", "responses.annotation.v1", `null`)),
			errHas: `messages[1].citations[0]: the openai url_citation payload (version "responses.annotation.v1") does not decode: the value is null`,
		},
		{
			name: "a citation of a version to come", m: withCitation(own("url_citation", "responses.annotation.v2", `{}`)),
			errHas: `messages[1].citations[0]: the openai url_citation payload's version "responses.annotation.v2" is not one`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, Config{})
			req := searchRequest("Hi")
			tt.m.Role = conversation.MessageAssistant
			req.Messages = append(req.Messages, tt.m)
			_, err := llm.Collect(b.client.Generate(context.Background(), req))
			if err == nil || !strings.Contains(err.Error(), tt.errHas) {
				t.Fatalf("err = %v, want one containing %q", err, tt.errHas)
			}
			if !errors.Is(err, ErrBadRequest) || !errors.Is(err, ErrPayload) || errors.Is(err, ErrUnavailable) {
				t.Errorf("err = %v, want ErrBadRequest and ErrPayload, not ErrUnavailable", err)
			}
			if n := len(b.fake.Requests()); n != 0 {
				t.Errorf("%d requests sent, want none", n)
			}
		})
	}
}
