package anthropic

import (
	"encoding/json"
	"fmt"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/engine-brain/brain/conversation"
)

// citation maps one citation of a text block, raw as sent. Only web search
// citations (web_search_result_location) name a source with a URL; those
// of documents and search result blocks, which this adapter never sends,
// are skipped. The citation goes whole into Replay: its encrypted_index is
// what Anthropic needs to accept it back.
func citation(raw string) (conversation.Citation, bool) {
	var v struct {
		Type      string `json:"type"`
		URL       string `json:"url"`
		Title     string `json:"title"`
		CitedText string `json:"cited_text"`
	}
	if json.Unmarshal([]byte(raw), &v) != nil || v.Type != "web_search_result_location" || v.URL == "" {
		return conversation.Citation{}, false
	}
	return conversation.Citation{
		Source:  conversation.Source{URL: v.URL, Title: v.Title},
		Excerpt: v.CitedText,
		Replay:  &conversation.ProviderPayload{Provider: name, Format: formatCitation, Value: json.RawMessage(raw)},
	}, true
}

// redacted is the reasoning of a redacted_thinking block: no text, its
// encrypted data as a payload (a JSON string) to replay unchanged.
func redacted(data string) *conversation.Reasoning {
	v, _ := json.Marshal(data)
	return &conversation.Reasoning{Payload: &conversation.ProviderPayload{Provider: name, Format: formatRedacted, Value: v}}
}

// reasoningBlock maps reasoning to replay: a redacted_thinking payload of
// this adapter as a redacted_thinking block, signed thinking as a thinking
// block. ok is false for reasoning that is not replayed: that of another
// provider (its payload is that provider's), unsigned reasoning (the API
// refuses it) and payloads of a format this adapter does not know. A
// redacted_thinking payload that does not decode is an error, not a silent
// loss.
func reasoningBlock(r conversation.Reasoning) (b sdk.ContentBlockParamUnion, ok bool, err error) {
	if p := r.Payload; p != nil {
		if p.Provider != name {
			return b, false, nil
		}
		if p.Format == formatRedacted {
			var data string
			if err := json.Unmarshal(p.Value, &data); err != nil || data == "" {
				return b, false, fmt.Errorf("the %s payload's value is not a non-empty JSON string", formatRedacted)
			}
			return sdk.NewRedactedThinkingBlock(data), true, nil
		}
	}
	if r.Signature == "" {
		return b, false, nil
	}
	return sdk.NewThinkingBlock(r.Signature, r.Text), true, nil
}
