package anthropic

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/engine-brain/brain/conversation"
)

// Payload formats of this adapter (conversation.ProviderPayload.Format).
// Each holds what Anthropic sent, to be sent back as it came.
const (
	formatSearchUse    = "server_tool_use"        // a search's server_tool_use block
	formatSearchResult = "web_search_tool_result" // a search's result block
	formatCitation     = "citation"               // one citation of a text block
	formatRedacted     = "redacted_thinking"      // the block's data, a JSON string
)

// Versions a payload records: the wire contract it was made under, so that
// a later adapter knows whether it can send the payload back.
const (
	// webSearchVersion is the version of the web search tool this adapter
	// requests: its server_tool_use and result blocks, and the citations of
	// their results, are made under it.
	webSearchVersion = "web_search_20250305"
	// apiVersion is the Messages API version this adapter speaks (its
	// anthropic-version header, set in New rather than left to the SDK so
	// that an SDK upgrade cannot change it silently): redacted thinking
	// belongs to the API, not to a tool.
	apiVersion = "2026-10-21"
)

// contract is what a payload of format holds, for the formats this adapter
// writes: the type of the JSON object it is ("" for redacted thinking's
// string) and the versions of it the adapter can send back. A format it
// does not write has none. "" among the versions is a payload logged
// before versions were recorded, which citations and redacted thinking
// were, under the contract of today.
func contract(format string) (typ string, versions []string) {
	switch format {
	case formatSearchUse:
		return "server_tool_use", []string{webSearchVersion}
	case formatSearchResult:
		return "web_search_tool_result", []string{webSearchVersion}
	case formatCitation:
		return "web_search_result_location", []string{webSearchVersion, ""}
	case formatRedacted:
		return "", []string{apiVersion, ""}
	}
	return "", nil
}

// own reports whether p is a payload this adapter sends back: Anthropic's,
// of a format it writes. Another provider's are not (their text goes
// alone), nor are formats it does not know (a newer adapter's).
func own(p *conversation.ProviderPayload) bool {
	if p == nil || p.Provider != name {
		return false
	}
	_, versions := contract(p.Format)
	return versions != nil
}

// check returns why p, a payload of this adapter (see own), cannot be sent
// back: a version it cannot continue, or a value that does not decode as
// its format's. Either is refused rather than dropped: the answer it
// belongs to would go back without a part the API needs.
func check(p *conversation.ProviderPayload) error {
	typ, versions := contract(p.Format)
	if !slices.Contains(versions, p.Version) {
		return fmt.Errorf("the %s payload is of version %q, which this adapter cannot continue (it knows %s)", p.Format, p.Version, known(versions))
	}
	if typ == "" {
		var data string
		if err := json.Unmarshal(p.Value, &data); err != nil || data == "" {
			return fmt.Errorf("the %s payload does not decode: its value is not a non-empty JSON string", p.Format)
		}
		return nil
	}
	var v struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(p.Value, &v); err != nil {
		return fmt.Errorf("the %s payload does not decode: %w", p.Format, err)
	}
	if v.Type != typ {
		return fmt.Errorf("the %s payload does not decode: its value's type is %q, not %q", p.Format, v.Type, typ)
	}
	return nil
}

// known lists versions for an error message.
func known(versions []string) string {
	out := make([]string, len(versions))
	for i, v := range versions {
		out[i] = strconv.Quote(v)
		if v == "" {
			out[i] = "none (logged before versions)"
		}
	}
	return strings.Join(out, ", ")
}

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
		Replay:  &conversation.ProviderPayload{Provider: name, Format: formatCitation, Version: webSearchVersion, Value: json.RawMessage(raw)},
	}, true
}

// redacted is the reasoning of a redacted_thinking block: no text, its
// encrypted data as a payload (a JSON string) to replay unchanged.
func redacted(data string) *conversation.Reasoning {
	v, _ := json.Marshal(data)
	return &conversation.Reasoning{Payload: &conversation.ProviderPayload{Provider: name, Format: formatRedacted, Version: apiVersion, Value: v}}
}

// reasoningBlock maps reasoning to replay: a redacted_thinking payload of
// this adapter as a redacted_thinking block, signed thinking as a thinking
// block. ok is false for reasoning that is not replayed: that of another
// provider (its payload is that provider's), unsigned reasoning (the API
// refuses it) and payloads of a format this adapter does not know. A
// redacted_thinking payload it cannot send back is an error (see check),
// not a silent loss.
func reasoningBlock(r conversation.Reasoning) (b sdk.ContentBlockParamUnion, ok bool, err error) {
	if p := r.Payload; p != nil {
		if p.Provider != name {
			return b, false, nil
		}
		if p.Format == formatRedacted {
			if err := check(p); err != nil {
				return b, false, err
			}
			var data string
			_ = json.Unmarshal(p.Value, &data) // check decoded it
			return sdk.NewRedactedThinkingBlock(data), true, nil
		}
	}
	if r.Signature == "" {
		return b, false, nil
	}
	return sdk.NewThinkingBlock(r.Signature, r.Text), true, nil
}
