package openai

import (
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"

	"github.com/engine-brain/brain/conversation"
)

// assistantItems maps an assistant message of the view to the input items
// the Responses API wrote it as, in their order: its reasoning items, its
// text as output messages with its web_search_call items where they came
// in it (TextAt), and its function calls. What this adapter kept of them
// (its payloads) goes back as it came; another provider's payloads mean
// nothing to OpenAI and are left out, their text is sent. An error names
// the payload, relative to the message ("reasoning[0]: ..."), that cannot
// go back.
//
// Reasoning goes first: the view does not say where a reasoning item came
// among the searches, and in OpenAI's answers it comes before what it
// leads to. A message with neither text nor calls gives nothing: the API
// refuses a reasoning item without the item that followed it.
func assistantItems(m conversation.Message) ([]responses.ResponseInputItemUnionParam, error) {
	text := m.Text()
	out, err := reasoningItems(m.Reasoning)
	if err != nil {
		return nil, err
	}
	searches, err := searchItems(m.Hosted)
	if err != nil {
		return nil, err
	}
	notes, err := notesOf(m.Citations, text)
	if err != nil {
		return nil, err
	}
	if text == "" && len(m.ToolCalls) == 0 {
		return nil, nil
	}
	out = append(out, textItems(text, searches, notes)...)
	for _, tc := range m.ToolCalls {
		args := string(tc.Arguments)
		if args == "" {
			args = "{}"
		}
		out = append(out, responses.ResponseInputItemParamOfFunctionCall(args, tc.ID, tc.Name))
	}
	return out, nil
}

// reasoningItems maps the reasoning OpenAI produced back to reasoning
// items; other reasoning is left out.
func reasoningItems(rs []conversation.Reasoning) ([]responses.ResponseInputItemUnionParam, error) {
	var out []responses.ResponseInputItemUnionParam
	for j, r := range rs {
		item, ok, err := reasoningItem(r)
		if err != nil {
			return nil, fmt.Errorf("reasoning[%d]: %w", j, err)
		}
		if ok {
			out = append(out, item)
		}
	}
	return out, nil
}

// reasoningItem is the reasoning item r came as; ok is false for reasoning
// without a payload of this adapter.
func reasoningItem(r conversation.Reasoning) (item responses.ResponseInputItemUnionParam, ok bool, err error) {
	p := r.Payload
	ours, err := ownPayload(p, formatReasoning, versionReasoning, versionReasoningUnversioned)
	if !ours || err != nil {
		return item, false, err
	}
	if p.Version == versionReasoningUnversioned {
		return unversionedReasoning(r)
	}
	if _, err := objectOf(p, "id", "encrypted_content"); err != nil {
		return item, false, err
	}
	v := param.Override[responses.ResponseReasoningItemParam](p.Value)
	return responses.ResponseInputItemUnionParam{OfReasoning: &v}, true, nil
}

// reasoningPayload is the Value of a reasoning payload logged before
// versions were recorded (versionReasoningUnversioned).
type reasoningPayload struct {
	ID               string `json:"id"`
	EncryptedContent string `json:"encrypted_content"`
}

// unversionedReasoning rebuilds the reasoning item of r, whose payload was
// logged before versions were recorded: its id and encrypted content, with
// r's text as its summary.
func unversionedReasoning(r conversation.Reasoning) (item responses.ResponseInputItemUnionParam, ok bool, err error) {
	var v reasoningPayload
	err = json.Unmarshal(r.Payload.Value, &v)
	if err == nil && (v.ID == "" || v.EncryptedContent == "") {
		err = errors.New("it lacks the id or the encrypted_content")
	}
	if err != nil {
		return item, false, fmt.Errorf("the %s %s payload (without a version) does not decode: %w", name, formatReasoning, err)
	}
	summary := []responses.ResponseReasoningItemSummaryParam{}
	if r.Text != "" {
		summary = append(summary, responses.ResponseReasoningItemSummaryParam{Text: r.Text})
	}
	item = responses.ResponseInputItemParamOfReasoning(v.ID, summary)
	item.OfReasoning.EncryptedContent = oai.String(v.EncryptedContent)
	return item, true, nil
}

// placedItem is an item that goes back where it came in the message's text:
// after its first at bytes.
type placedItem struct {
	at   int
	item responses.ResponseInputItemUnionParam
}

// searchItems are the web_search_call items of the hosted states, each
// kept on its final state, placed by it.
func searchItems(hosted []conversation.HostedActivity) ([]placedItem, error) {
	var out []placedItem
	for j, h := range hosted {
		ok, err := ownPayload(h.Payload, formatWebSearchCall, versionWebSearchCall)
		if err == nil && ok {
			_, err = objectOf(h.Payload, "id")
		}
		if err != nil {
			return nil, fmt.Errorf("hosted[%d]: %w", j, err)
		}
		if ok {
			v := param.Override[responses.ResponseFunctionWebSearchParam](h.Payload.Value)
			out = append(out, placedItem{at: h.TextAt, item: responses.ResponseInputItemUnionParam{OfWebSearchCall: &v}})
		}
	}
	return out, nil
}

// note is a url_citation annotation to send back: its fields as received
// and the span it cites, in bytes of the message's text.
type note struct {
	start, end int
	fields     map[string]json.RawMessage
}

// notesOf are the annotations of the citations of text, its message's.
// A citation without a range has no place in the text to go back to.
func notesOf(citations []conversation.Citation, text string) ([]note, error) {
	var out []note
	for j, c := range citations {
		var fields map[string]json.RawMessage
		ok, err := ownPayload(c.Replay, formatURLCitation, versionURLCitation)
		if err == nil && ok {
			fields, err = objectOf(c.Replay, "url")
		}
		if err != nil {
			return nil, fmt.Errorf("citations[%d]: %w", j, err)
		}
		if ok && c.Range != nil {
			start := min(max(c.Range.Start, 0), len(text))
			out = append(out, note{start: start, end: min(max(c.Range.End, start), len(text)), fields: fields})
		}
	}
	return out, nil
}

// textItems is text as output messages, cut where a search came in it, the
// search's item between the text before and after it; each message has
// the annotations that start in it.
func textItems(text string, searches []placedItem, notes []note) []responses.ResponseInputItemUnionParam {
	var out []responses.ResponseInputItemUnionParam
	from := 0
	for _, s := range searches {
		if at := min(max(s.at, from), len(text)); at > from {
			out = append(out, outputMessage(text, from, at, notes))
			from = at
		}
		out = append(out, s.item)
	}
	if from < len(text) {
		out = append(out, outputMessage(text, from, len(text), notes))
	}
	return out
}

// outputMessage is text[from:to] as an output message, with the notes that
// start in it as annotations. OpenAI counts an annotation's offsets in
// characters (code points, see textParts) of the message's text.
func outputMessage(text string, from, to int, notes []note) responses.ResponseInputItemUnionParam {
	part := text[from:to]
	chars := func(at int) int { return utf8.RuneCountInString(part[:min(at, to)-from]) }
	annotations := []responses.ResponseOutputTextAnnotationUnionParam{}
	for _, n := range notes {
		if n.start < from || n.start >= to && to < len(text) {
			continue
		}
		n.fields["start_index"], _ = json.Marshal(chars(n.start)) // an int always encodes
		n.fields["end_index"], _ = json.Marshal(chars(n.end))
		v := param.Override[responses.ResponseOutputTextAnnotationURLCitationParam](n.fields)
		annotations = append(annotations, responses.ResponseOutputTextAnnotationUnionParam{OfURLCitation: &v})
	}
	return responses.ResponseInputItemUnionParam{OfOutputMessage: &responses.ResponseOutputMessageParam{
		Content: []responses.ResponseOutputMessageContentUnionParam{{OfOutputText: &responses.ResponseOutputTextParam{
			Text:        part,
			Annotations: annotations,
		}}},
		Status: responses.ResponseOutputMessageStatusCompleted,
	}}
}
