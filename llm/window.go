package llm

// Windowed is a model that says how many tokens of conversation one call
// may carry: brain serve's providers do when configured with
// max_context_tokens. A recipe's own limits.max_context_tokens wins.
type Windowed interface {
	Model
	ContextTokens() int
}

// WithContextTokens returns m saying that a call may carry n tokens of
// conversation (n > 0).
func WithContextTokens(m Model, n int) Windowed { return windowed{m, n} }

type windowed struct {
	Model
	n int
}

func (w windowed) ContextTokens() int { return w.n }
