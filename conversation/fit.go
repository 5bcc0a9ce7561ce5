package conversation

import "slices"

// Estimates of what a message costs of a model's context window. They are
// deliberately on the safe side and cheap (no tokenizer: brain speaks to
// several providers, each counting its own way).
const (
	// BytesPerToken is the bytes of text counted as one token: three, about
	// right for text in CJK scripts and generous for English (about four).
	BytesPerToken = 3
	// imageTokens is what an image block is counted as, whatever its size:
	// providers scale images down and charge a bounded number of tokens.
	imageTokens = 1600
	// messageTokens is the fixed cost of each message (its role, its
	// framing).
	messageTokens = 4
)

// Texts that stand, in a fitted view, for what was left out, so that the
// model knows something is missing rather than guess. They do not urge it
// to call a tool again: not every tool may safely run twice.
const (
	ClearedResult = "[This tool result is left out: the conversation is longer than the model is shown.]"
	OmittedNote   = "[The earlier part of this conversation is left out: it is longer than the model is shown.]"
)

// Fitting says what Fit left out of a view.
type Fitting struct {
	// Cleared counts the tool results kept whose content was replaced by
	// [ClearedResult].
	Cleared int
	// Dropped counts the messages left out from the start.
	Dropped int
}

// Fitted reports whether anything was left out.
func (f Fitting) Fitted() bool { return f.Cleared > 0 || f.Dropped > 0 }

// Fit returns msgs, a provider view, shortened so that its estimated size
// ([EstimateTokens]) is at most budget tokens, and what it left out. The
// conversation is cut from the oldest end, in this order, until it fits:
//
//  1. the content of tool results before the last user message (earlier
//     exchanges; the exchange itself stays, so the model still reads what
//     was asked and answered);
//  2. whole earlier exchanges, each from a user message to the next, the
//     first message kept then starting with [OmittedNote];
//  3. the content of the current exchange's tool results, except those
//     answering the last assistant message (what the model has just asked
//     for).
//
// A tool result is never separated from the call it answers, and after a
// drop what is left starts with a user message, as providers require. When
// even that is over budget, the rest is returned as it is: the provider
// then refuses it with an error that the turn reports. msgs is not changed;
// a view that fits is returned as it is, and budget <= 0 means no bound.
//
// What is cut is a multiple of a quarter of budget: the cut stays where it
// is while the conversation grows by that much, so that consecutive calls
// share their beginning, which providers cache.
func Fit(msgs []Message, budget int) ([]Message, Fitting) {
	if budget <= 0 {
		return msgs, Fitting{}
	}
	total := ViewTokens(msgs)
	if total <= budget {
		return msgs, Fitting{} // the common case: nothing is allocated
	}
	step := max(budget/4, 1)
	cut := (total - budget + step - 1) / step * step
	f := fitter{target: total - cut, total: total, sizes: make([]int, len(msgs))}
	for i := range msgs {
		f.sizes[i] = EstimateTokens(&msgs[i])
	}
	f.msgs = slices.Clone(msgs) // changed messages are replaced, never written through
	lastUser := lastIndex(msgs, MessageUser)
	f.clear(0, lastUser)
	dropped := f.drop(lastUser)
	f.clear(lastUser+1, lastIndex(msgs, MessageAssistant))
	cleared := 0
	if f.cleared != nil {
		for _, c := range f.cleared[dropped:] {
			if c {
				cleared++
			}
		}
	}
	out := f.msgs[dropped:]
	if dropped > 0 {
		out[0] = withOmittedNote(out[0])
	}
	return out, Fitting{Cleared: cleared, Dropped: dropped}
}

// NoteOmitted makes msgs, the provider view of a conversation whose
// beginning was not read, start with [OmittedNote], as Fit starts a view
// it cut, and reports whether it changed msgs: msgs[0] is replaced by a
// copy, its blocks are not written to, unless it starts so already.
func NoteOmitted(msgs []Message) bool {
	if len(msgs) == 0 || len(msgs[0].Content) > 0 && msgs[0].Content[0].Text == OmittedNote {
		return false
	}
	msgs[0] = withOmittedNote(msgs[0])
	return true
}

// OmittedNoteTokens is what [OmittedNote] adds to a view's size.
const OmittedNoteTokens = (len(OmittedNote) + BytesPerToken - 1) / BytesPerToken

// withOmittedNote returns m with [OmittedNote] before its content.
func withOmittedNote(m Message) Message {
	m.Content = append([]Block{TextBlock(OmittedNote)}, m.Content...)
	return m
}

// fitter is the state of one Fit: the view being cut, the estimated size
// of each of its messages and of all of them, and the size to cut it to.
type fitter struct {
	target  int
	msgs    []Message
	sizes   []int
	total   int
	cleared []bool // by index in msgs: the tool result was cleared
}

func (f *fitter) over() bool { return f.total > f.target }

// clear replaces the content of the tool results among msgs[from:to] with
// [ClearedResult], oldest first, until the view fits.
func (f *fitter) clear(from, to int) {
	for i := max(from, 0); i < to && f.over(); i++ {
		m := f.msgs[i]
		if m.Role != MessageTool {
			continue
		}
		m.Content = []Block{TextBlock(ClearedResult)}
		size := EstimateTokens(&m)
		if size >= f.sizes[i] {
			continue // already as short as it gets
		}
		f.msgs[i] = m
		f.total -= f.sizes[i] - size
		f.sizes[i] = size
		if f.cleared == nil {
			f.cleared = make([]bool, len(f.msgs))
		}
		f.cleared[i] = true
	}
}

// drop leaves out the exchanges before msgs[lastUser], oldest first, until
// the view fits with [OmittedNote] added, and returns how many messages it
// left out. What is left starts with a user message: an exchange goes
// whole or not at all.
func (f *fitter) drop(lastUser int) int {
	if !f.over() || lastUser <= 0 {
		return 0
	}
	note := OmittedNoteTokens
	n := 0
	for n < lastUser && (f.total+note > f.target || f.msgs[n].Role != MessageUser) {
		f.total -= f.sizes[n]
		n++
	}
	f.total += note
	return n
}

// lastIndex returns the index of the last message of role in msgs, or -1.
func lastIndex(msgs []Message, role MessageRole) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == role {
			return i
		}
	}
	return -1
}

// ViewTokens returns the estimated size of a provider view: the sum of
// [EstimateTokens] of its messages.
func ViewTokens(msgs []Message) int {
	n := 0
	for i := range msgs {
		n += EstimateTokens(&msgs[i])
	}
	return n
}

// EstimateTokens estimates what m costs of a model's context window:
// [BytesPerToken] bytes of its text, tool calls, replayed reasoning, hosted
// activity and citations a token, an image a fixed amount, plus a little per
// message.
func EstimateTokens(m *Message) int {
	n := 0
	for i := range m.Content {
		n += blockTokens(&m.Content[i])
	}
	bytes := 0
	for i := range m.Reasoning {
		r := &m.Reasoning[i]
		bytes += len(r.Text) + len(r.Signature) + payloadBytes(r.Payload)
	}
	for i := range m.ToolCalls {
		c := &m.ToolCalls[i]
		bytes += len(c.ID) + len(c.Name) + len(c.Arguments) + payloadBytes(c.Payload)
	}
	for i := range m.Hosted { // sent back to the provider that ran them
		h := &m.Hosted[i]
		bytes += len(h.Input) + payloadBytes(h.Payload)
	}
	for i := range m.Citations {
		bytes += payloadBytes(m.Citations[i].Replay)
	}
	bytes += len(m.ToolCallID) + len(m.ToolName)
	return messageTokens + n + ceilDiv(bytes, BytesPerToken)
}

func blockTokens(b *Block) int {
	if b.Type == BlockImage {
		return imageTokens
	}
	bytes := len(b.Text) + len(b.Data)
	if r := b.Resource; r != nil {
		bytes += len(r.URI) + len(r.Text) + len(r.Blob)
	}
	return ceilDiv(bytes, BytesPerToken)
}

func payloadBytes(p *ProviderPayload) int {
	if p == nil {
		return 0
	}
	return len(p.Value)
}

func ceilDiv(n, d int) int { return (n + d - 1) / d }
