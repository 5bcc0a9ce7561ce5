package gemini

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"

	"google.golang.org/genai"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/llm"
)

// pendingCall is a function call held until the end of the answer.
type pendingCall struct {
	call      *genai.FunctionCall
	signature []byte
}

// assembler turns the chunks of one streamed answer (GenerateContentResponse
// values, of which only the first candidate is read) into parts. Text goes
// out as it arrives; consecutive thought parts go out as one reasoning part
// when the answer moves on or a thought signature closes them; function
// calls, which Gemini sends whole, are held and sent, with the search
// grounding, usage and the finish reason, by end (so that an answer of tool
// calls alone can be retried when its stream is cut). Their arguments never
// stream, so no llm.PartToolArgs goes out: a consumer that shows arguments
// as they are written sees each call's only when the answer ends.
//
// Part kinds it does not know (inline data, executable code, newer kinds)
// are skipped, never fatal.
type assembler struct {
	thinking   bool // a thought block is open
	thought    strings.Builder
	thoughtSig []byte
	// textSig is the signature Gemini put on a part of the answer's text.
	textSig []byte
	// text is the answer's text as yielded, for the citations' ranges.
	text      strings.Builder
	calls     []pendingCall
	usage     *genai.GenerateContentResponseUsageMetadata // the latest: counts are running totals
	finish    genai.FinishReason
	blocked   bool // the prompt was refused (promptFeedback.blockReason)
	grounding *genai.GroundingMetadata
	// responseID is the provider's id of the answer; it makes the ids this
	// adapter gives calls and activities unique.
	responseID string
}

// add takes one chunk and returns the parts it completes, in order.
func (a *assembler) add(resp *genai.GenerateContentResponse) []llm.Part {
	if resp == nil {
		return nil
	}
	if a.responseID == "" {
		a.responseID = resp.ResponseID
	}
	if resp.UsageMetadata != nil {
		a.usage = resp.UsageMetadata
	}
	if pf := resp.PromptFeedback; pf != nil && pf.BlockReason != "" && pf.BlockReason != genai.BlockedReasonUnspecified {
		a.blocked = true
	}
	if len(resp.Candidates) == 0 || resp.Candidates[0] == nil {
		return nil
	}
	cand := resp.Candidates[0]
	var out []llm.Part
	if cand.Content != nil {
		for _, p := range cand.Content.Parts {
			out = append(out, a.part(p)...)
		}
	}
	if cand.GroundingMetadata != nil {
		a.grounding = cand.GroundingMetadata
	}
	if f := cand.FinishReason; f != "" && f != genai.FinishReasonUnspecified {
		a.finish = f
	}
	return out
}

// part takes one part of a chunk.
func (a *assembler) part(p *genai.Part) []llm.Part {
	switch {
	case p == nil:
		return nil
	case p.Thought && p.FunctionCall == nil:
		a.thinking = true
		a.thought.WriteString(p.Text)
		if len(p.ThoughtSignature) > 0 {
			// The signature comes on the last part of a thought block.
			a.thoughtSig = p.ThoughtSignature
			return a.closeThought()
		}
		return nil
	case p.FunctionCall != nil:
		out := a.closeThought()
		a.calls = append(a.calls, pendingCall{call: p.FunctionCall, signature: p.ThoughtSignature})
		return out
	case p.Text != "" || (len(p.ThoughtSignature) > 0 && !hasData(p)):
		out := a.closeThought()
		if len(p.ThoughtSignature) > 0 {
			a.textSig = p.ThoughtSignature
		}
		if p.Text != "" {
			a.text.WriteString(p.Text)
			out = append(out, llm.Part{Kind: llm.PartText, Text: p.Text})
		}
		return out
	}
	// Inline data, files, executable code and its results, newer kinds.
	return nil
}

// hasData reports whether p carries something other than text.
func hasData(p *genai.Part) bool {
	return p.InlineData != nil || p.FileData != nil || p.ExecutableCode != nil || p.CodeExecutionResult != nil ||
		p.FunctionResponse != nil || p.ToolCall != nil || p.ToolResponse != nil
}

// closeThought ends the open thought block, if any, as one reasoning part.
func (a *assembler) closeThought() []llm.Part {
	if !a.thinking {
		return nil
	}
	text, sig := a.thought.String(), a.thoughtSig
	a.thinking, a.thoughtSig = false, nil
	a.thought.Reset()
	if text == "" && sig == nil {
		return nil
	}
	return []llm.Part{{Kind: llm.PartReasoning, Reasoning: &conversation.Reasoning{Text: text, Payload: signaturePayload(sig)}}}
}

// finished reports whether the provider said why the answer ended: only
// then is it whole.
func (a *assembler) finished() bool {
	return a.finish != "" || a.blocked
}

// end returns the parts that close the answer: an open thought block, the
// text's signature (as reasoning without text: see modelParts), the tool
// calls, the search's hosted activity and citations, usage, the finish
// reason.
func (a *assembler) end() []llm.Part {
	out := a.closeThought()
	if len(a.textSig) > 0 {
		out = append(out, llm.Part{Kind: llm.PartReasoning, Reasoning: &conversation.Reasoning{Payload: signaturePayload(a.textSig)}})
	}
	for i, c := range a.calls {
		id := c.call.ID
		if id == "" {
			id = "call_" + a.uniqueID() + "_" + strconv.Itoa(i) // the engine pairs results by id
		}
		args := []byte("{}")
		if len(c.call.Args) > 0 {
			args, _ = json.Marshal(c.call.Args) // decoded from JSON: it encodes
		}
		out = append(out, llm.Part{Kind: llm.PartToolCall, ToolCall: &conversation.ToolCall{
			ID: id, Name: c.call.Name, Arguments: args, Payload: signaturePayload(c.signature),
		}})
	}
	searches := 0
	if a.grounding != nil {
		var parts []llm.Part
		parts, searches = a.groundingParts()
		out = append(out, parts...)
	}
	if a.usage != nil || searches > 0 {
		u := llm.Usage{}
		if m := a.usage; m != nil {
			// The prompt includes cached tokens; thoughts are billed as output.
			u.InputTokens = int(m.PromptTokenCount + m.ToolUsePromptTokenCount)
			u.OutputTokens = int(m.CandidatesTokenCount + m.ThoughtsTokenCount)
		}
		if searches > 0 {
			u.Hosted = map[string]int{hostedWebSearch: searches}
		}
		out = append(out, llm.Part{Kind: llm.PartUsage, Usage: &u})
	}
	return append(out, llm.Part{Kind: llm.PartFinish, Finish: a.finishReason()})
}

// finishReason maps the provider's finish reason. A refused prompt is
// filtered; an answer with tool calls ends for them; reasons of newer
// versions (and OTHER, MALFORMED_FUNCTION_CALL) count as a normal stop.
func (a *assembler) finishReason() llm.FinishReason {
	switch a.finish {
	case genai.FinishReasonMaxTokens:
		return llm.FinishLength
	case genai.FinishReasonSafety, genai.FinishReasonRecitation, genai.FinishReasonBlocklist,
		genai.FinishReasonProhibitedContent, genai.FinishReasonSPII, genai.FinishReasonImageSafety,
		genai.FinishReasonImageProhibitedContent, genai.FinishReasonImageRecitation:
		return llm.FinishFiltered
	case "":
		if a.blocked {
			return llm.FinishFiltered
		}
	}
	if len(a.calls) > 0 {
		return llm.FinishToolCalls
	}
	return llm.FinishStop
}

// uniqueID is the answer's id made safe for tool call ids (letters, digits,
// - and _, as every provider accepts), or a random one when the provider
// sent none.
func (a *assembler) uniqueID() string {
	id := strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || ('0' <= r && r <= '9') || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') {
			return r
		}
		return -1
	}, a.responseID)
	if id == "" {
		b := make([]byte, 8)
		_, _ = rand.Read(b)
		id = hex.EncodeToString(b)
	}
	a.responseID = id // one random id per answer
	return id
}
