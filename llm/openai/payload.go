package openai

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/engine-brain/brain/conversation"
)

// Payload formats of this adapter (conversation.ProviderPayload.Format),
// each the type of the Responses API object its Value holds.
const (
	formatReasoning     = "reasoning"       // a reasoning output item
	formatWebSearchCall = "web_search_call" // a web_search_call output item
	formatURLCitation   = "url_citation"    // a url_citation annotation
)

// Payload versions: the wire contract a payload was made under, recorded
// in it so that an adapter that comes to keep another shape can tell the
// payloads logged before from its own, and refuse what it cannot continue
// instead of sending what the API would misread.
const (
	// versionReasoning: the reasoning item as the Responses API sent it,
	// with its encrypted_content, sent back as it is.
	versionReasoning = "responses.item.v1"
	// versionReasoningUnversioned: a reasoning payload logged before
	// versions were recorded, {"id", "encrypted_content"}; its item is
	// rebuilt with the reasoning text as its summary.
	versionReasoningUnversioned = ""
	// versionWebSearchCall: the web_search_call item as the Responses API
	// sent it, sent back as it is.
	versionWebSearchCall = "responses.item.v1"
	// versionURLCitation: the url_citation annotation as the Responses API
	// sent it; it goes back with its offsets counted in the text it is
	// sent with (the same offsets when that text is the one it came in).
	versionURLCitation = "responses.annotation.v1"
)

// newPayload is a payload of this adapter holding raw, the JSON of a
// Responses API object as received.
func newPayload(format, version, raw string) *conversation.ProviderPayload {
	return &conversation.ProviderPayload{Provider: name, Format: format, Version: version, Value: json.RawMessage(raw)}
}

// ownPayload reports whether p is a payload of this adapter, which must be
// of format and of one of versions. Another provider's payload (or none)
// is not: it means nothing to OpenAI. An own payload of another format or
// version is an error: sending the conversation without it would give the
// API a history it did not write, refused or misread far from the cause.
func ownPayload(p *conversation.ProviderPayload, format string, versions ...string) (bool, error) {
	if p == nil || p.Provider != name {
		return false, nil
	}
	if p.Format != format {
		return false, fmt.Errorf("the %s payload's format %q is not one this adapter takes here (it takes %q; was the log written by a newer brain?)", name, p.Format, format)
	}
	if !slices.Contains(versions, p.Version) {
		return false, fmt.Errorf("the %s %s payload's version %q is not one this adapter continues (it continues %s; was the log written by a newer brain?)", name, format, p.Version, versionList(versions))
	}
	return true, nil
}

// versionList names versions for an error; the empty one is the payloads
// logged before versions were recorded.
func versionList(versions []string) string {
	names := make([]string, len(versions))
	for i, v := range versions {
		names[i] = fmt.Sprintf("%q", v)
		if v == "" {
			names[i] = "payloads without a version"
		}
	}
	return strings.Join(names, " and ")
}

// objectOf decodes the Value of p, an own payload, as the JSON object of
// its format: its "type" is the format and each of need is a non-empty
// string.
func objectOf(p *conversation.ProviderPayload, need ...string) (map[string]json.RawMessage, error) {
	fields, err := object(p.Value, p.Format, need)
	if err != nil {
		return nil, fmt.Errorf("the %s %s payload (version %q) does not decode: %w", name, p.Format, p.Version, err)
	}
	return fields, nil
}

// object decodes raw as a JSON object of type typ with need set (see
// objectOf).
func object(raw json.RawMessage, typ string, need []string) (map[string]json.RawMessage, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, err
	}
	if fields == nil {
		return nil, errors.New("the value is null")
	}
	for _, k := range append([]string{"type"}, need...) {
		var s string
		if json.Unmarshal(fields[k], &s) != nil || s == "" {
			return nil, fmt.Errorf("%q is not a non-empty string", k)
		}
		if k == "type" && s != typ {
			return nil, fmt.Errorf("its type is %q", s)
		}
	}
	return fields, nil
}
