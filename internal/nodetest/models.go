package nodetest

import (
	"context"
	"iter"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/tools"
)

// FailingModel fails every call with Err, recording the model name asked in
// Asked, when set.
type FailingModel struct {
	Err   error
	Asked *atomic.Value
}

// Generate fails with m.Err.
func (m FailingModel) Generate(_ context.Context, req *llm.Request) iter.Seq2[llm.Part, error] {
	if m.Asked != nil {
		m.Asked.Store(req.Params.Model)
	}
	return func(yield func(llm.Part, error) bool) { yield(llm.Part{}, m.Err) }
}

// BlockingModel sends on Entered when a call begins, and answers respond
// once Release is closed (or fails when the call is cancelled first).
type BlockingModel struct {
	Entered chan struct{}
	Release chan struct{}
}

// NewBlockingModel returns a BlockingModel whose Entered holds one call's
// signal.
func NewBlockingModel() *BlockingModel {
	return &BlockingModel{Entered: make(chan struct{}, 1), Release: make(chan struct{})}
}

// Generate waits for m.Release, then calls respond.
func (m *BlockingModel) Generate(ctx context.Context, _ *llm.Request) iter.Seq2[llm.Part, error] {
	return func(yield func(llm.Part, error) bool) {
		m.Entered <- struct{}{}
		select {
		case <-m.Release:
		case <-ctx.Done():
			yield(llm.Part{}, ctx.Err())
			return
		}
		yield(llm.Part{Kind: llm.PartToolCall, ToolCall: &conversation.ToolCall{ID: "c1", Name: "respond", Arguments: []byte(`{"message":"done"}`)}}, nil)
	}
}

// StoppedModel answers nothing until its call is cancelled, and then closes
// Stopped (once).
type StoppedModel struct {
	Stopped chan struct{}
	once    sync.Once
}

// NewStoppedModel returns a StoppedModel with Stopped open.
func NewStoppedModel() *StoppedModel { return &StoppedModel{Stopped: make(chan struct{})} }

// Generate waits for ctx to end.
func (m *StoppedModel) Generate(ctx context.Context, _ *llm.Request) iter.Seq2[llm.Part, error] {
	return func(yield func(llm.Part, error) bool) {
		<-ctx.Done()
		m.once.Do(func() { close(m.Stopped) })
		yield(llm.Part{}, ctx.Err())
	}
}

// PanickingModel panics inside a turn.
type PanickingModel struct{}

// Generate panics with "model bug".
func (PanickingModel) Generate(context.Context, *llm.Request) iter.Seq2[llm.Part, error] {
	return func(func(llm.Part, error) bool) { panic("model bug") }
}

// Citing answers as its Model does, with a text citing Src first when what
// it is shown mentions Mention.
type Citing struct {
	llm.Model
	Mention string
	Src     conversation.Source
}

// Generate answers as m.Model does, after the citation when it is due.
func (m Citing) Generate(ctx context.Context, req *llm.Request) iter.Seq2[llm.Part, error] {
	answer := m.Model.Generate(ctx, req)
	if !slices.ContainsFunc(req.Messages, func(msg conversation.Message) bool { return strings.Contains(msg.Text(), m.Mention) }) {
		return answer
	}
	return func(yield func(llm.Part, error) bool) {
		if !yield(llm.Part{Kind: llm.PartText, Text: "Counted."}, nil) ||
			!yield(llm.Part{Kind: llm.PartCitation, Citation: &conversation.Citation{Source: m.Src}}, nil) {
			return
		}
		for p, err := range answer {
			if !yield(p, err) {
				return
			}
		}
	}
}

// Exclusive wraps a model and counts the times two turns of one process
// call it at the same time (Overlaps). Its zero value, with Model set, is
// ready to use.
type Exclusive struct {
	llm.Model
	mu       sync.Mutex
	inflight map[string]bool
	overlaps atomic.Int32
}

// Generate answers as x.Model does, noting the caller's process meanwhile.
func (x *Exclusive) Generate(ctx context.Context, req *llm.Request) iter.Seq2[llm.Part, error] {
	c, _ := tools.CallerFrom(ctx)
	return func(yield func(llm.Part, error) bool) {
		x.mu.Lock()
		if x.inflight == nil {
			x.inflight = map[string]bool{}
		}
		if x.inflight[c.ProcessID] {
			x.overlaps.Add(1)
		}
		x.inflight[c.ProcessID] = true
		x.mu.Unlock()
		defer func() {
			x.mu.Lock()
			delete(x.inflight, c.ProcessID)
			x.mu.Unlock()
		}()
		for p, err := range x.Model.Generate(ctx, req) {
			if !yield(p, err) {
				return
			}
		}
	}
}

// Overlaps returns how many times a process's call began while another of
// its calls ran.
func (x *Exclusive) Overlaps() int32 { return x.overlaps.Load() }
