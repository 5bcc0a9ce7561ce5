package node

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/engines"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/store"
)

// Metrics are a node's Prometheus metrics. Build them with NewMetrics on
// the registry that /metrics serves and pass them in Config.Metrics.
type Metrics struct {
	turns        *prometheus.CounterVec
	rounds       prometheus.Histogram
	corrections  *prometheus.CounterVec
	wakeLatency  prometheus.Histogram
	modelLatency *prometheus.HistogramVec
	tokens       *prometheus.CounterVec
	hosted       *prometheus.CounterVec
	modelErrors  *prometheus.CounterVec
	retries      *prometheus.CounterVec
	firstToken   *prometheus.HistogramVec
	unavailable  *prometheus.CounterVec // Redis, by source
	takeovers    prometheus.Counter
	drained      prometheus.Histogram
	fitted       *prometheus.CounterVec
	tooLong      *prometheus.CounterVec
	refused      *prometheus.CounterVec
	recipeTokens *prometheus.CounterVec
	trimmed      *prometheus.CounterVec
	histories    *prometheus.CounterVec
	daySpent     *prometheus.CounterVec
	approvals    *prometheus.CounterVec // requested, approved, rejected, timed_out
	decisionTime prometheus.Histogram
	liveUpdates  *prometheus.CounterVec // by outcome; its series below, looked up once
	liveOutcomes [liveOutcomeCount]prometheus.Counter
	watchDropped prometheus.Counter
}

// The outcomes of live updates (brain_live_updates_total).
type liveOutcome int

const (
	livePublished liveOutcome = iota
	liveCoalesced
	liveDropped
	liveFailed
	liveOutcomeCount
)

var liveOutcomeNames = [liveOutcomeCount]string{"published", "coalesced", "dropped", "failed"}

// NewMetrics registers a node's metrics on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		turns: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "brain_turns_total", Help: "Turns committed, by recipe and outcome (await_user, continue, finish, fail, abandoned).",
		}, []string{"recipe", "outcome"}),
		rounds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "brain_turn_rounds", Help: "Model calls per turn.", Buckets: []float64{1, 2, 3, 5, 8, 13, 21, 40},
		}),
		corrections: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "brain_validator_corrections_total", Help: "Corrections asked by the turn validators, by validator.",
		}, []string{"validator"}),
		wakeLatency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "brain_wake_latency_seconds", Help: "Time from a message's arrival in the inbox to the start of the turn that drains it.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
		}),
		modelLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "brain_model_latency_seconds", Help: "Duration of model calls, retries included, by provider (as recipes name it) and model.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 18),
		}, []string{"provider", "model"}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "brain_model_tokens_total", Help: "Tokens of model calls, by provider, model and direction (input, output).",
		}, []string{"provider", "model", "direction"}),
		modelErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "brain_model_errors_total",
			Help: "Model calls that failed after their retries, by provider, model and kind: rate_limit, auth, server (5xx, unreachable, a stream cut), timeout, context_length, bad_request, payload (provider data the adapter cannot send back), other.",
		}, []string{"provider", "model", "kind"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "brain_model_retries_total", Help: "Attempts of model calls made again after a failure (429, 5xx, a connection error), by provider and model.",
		}, []string{"provider", "model"}),
		firstToken: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "brain_model_time_to_first_token_seconds", Help: "Time from the start of a model call to the first text or tool call of its answer, by provider and model.",
			Buckets: prometheus.ExponentialBuckets(0.01, 2, 14),
		}, []string{"provider", "model"}),
		unavailable: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "brain_redis_unavailable_total",
			Help: redisUnavailableHelp,
		}, []string{"source"}),
		hosted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "brain_hosted_requests_total", Help: "Requests the model providers ran themselves and bill apart from tokens (web searches), by provider and tool.",
		}, []string{"provider", "tool"}),
		takeovers: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "brain_lease_takeovers_total", Help: "Turns recovered from a node that stopped before committing them.",
		}),
		drained: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "brain_inbox_drained_messages", Help: "Inbox messages drained into one turn (the inbox depth a wake found).",
			Buckets: []float64{1, 2, 3, 5, 10, 20, 50, 100, 1000},
		}),
		fitted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "brain_context_fitted_calls_total",
			Help: "Model calls shown the conversation cut to their recipe's limits.max_context_tokens, by recipe: processes that outgrew it.",
		}, []string{"recipe"}),
		tooLong: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "brain_context_refused_calls_total",
			Help: "Model calls the provider refused as too long for the model's context window, by recipe (asked again showing half as much): set limits.max_context_tokens, or the provider's max_context_tokens, below the window.",
		}, []string{"recipe"}),
		recipeTokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "brain_recipe_tokens_total",
			Help: "Tokens of the model calls of committed turns, by recipe and direction (input, output): what each kind of process costs.",
		}, []string{"recipe", "direction"}),
		trimmed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "brain_log_trimmed_events_total",
			Help: "Events deleted from the start of process logs by turns' commits, by recipe: logs that outgrew their recipe's limits.max_log_events.",
		}, []string{"recipe"}),
		histories: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "brain_turn_histories_total",
			Help: "Turns by where their conversation came from: kept (the node kept the process's log and read only what is new) or read_back (read from Redis, as far back as a model call is shown: a new process, one the node had not run, or a log it no longer kept). Many read_back: the node keeps too few logs for the processes it runs (HistoryCache, HistoryBytes).",
		}, []string{"source"}),
		daySpent: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "brain_day_budget_turns_total",
			Help: "Turns that found their process's tokens of the day (limits.max_tokens_per_day) used and stopped calling the model, by recipe: processes that wait for the next UTC day.",
		}, []string{"recipe"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "brain_inbox_refused_messages_total",
			Help: "Messages not stored because their process's inbox was full (the inbox limit), by kind: user and operator posts were refused, schedule ticks dropped.",
		}, []string{"kind"}),
		approvals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "brain_approvals_total",
			Help: "Tool calls that needed a person's approval, by recipe and what became of them: requested, approved, rejected (by a person) or timed_out (rejected at the recipe's approval.timeout).",
		}, []string{"recipe", "outcome"}),
		decisionTime: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "brain_approval_decision_seconds",
			Help:    "Time from a tool call's request for approval to the turn that applied its decision.",
			Buckets: prometheus.ExponentialBuckets(1, 4, 10), // 1 s to ~3 days
		}),
		liveUpdates: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "brain_live_updates_total",
			Help: "Live updates of this node's running turns, by outcome: published (sent to Redis as a message), coalesced (sent joined to the text delta before it), dropped (the node's buffer was full, or the node not running) or failed (Redis did not take the batch). They add up to every update the turns made.",
		}, []string{"outcome"}),
		watchDropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "brain_live_watch_dropped_total",
			Help: "Live updates a watcher on this node (an event stream) did not get because it had not taken the ones before: a slow client.",
		}),
	}
	for o, name := range liveOutcomeNames {
		m.liveOutcomes[o] = m.liveUpdates.WithLabelValues(name)
	}
	reg.MustRegister(m.liveUpdates, m.watchDropped, m.turns, m.rounds, m.corrections, m.wakeLatency, m.modelLatency, m.tokens, m.hosted, m.takeovers, m.drained, m.fitted, m.tooLong, m.refused, m.recipeTokens, m.trimmed, m.histories, m.daySpent,
		m.approvals, m.decisionTime, m.modelErrors, m.retries, m.firstToken)
	m.unavailable = registerShared(reg, m.unavailable)
	return m
}

// redisUnavailableHelp is the help of brain_redis_unavailable_total, whose
// family the node shares with the API (source="api"): the same wherever it
// is registered.
const redisUnavailableHelp = "Operations that failed because Redis could not serve just now, by source (api: requests answered 503 with Retry-After; node: its own work, retried)."

// registerShared registers c on reg, or returns the family another part of
// the server registered there first under the same name, help and labels.
// Any other refusal panics, as MustRegister does.
func registerShared(reg prometheus.Registerer, c *prometheus.CounterVec) *prometheus.CounterVec {
	err := reg.Register(c)
	var dup prometheus.AlreadyRegisteredError
	if errors.As(err, &dup) {
		if existing, ok := dup.ExistingCollector.(*prometheus.CounterVec); ok {
			return existing
		}
	}
	if err != nil {
		panic(err)
	}
	return c
}

// observeTurn records a committed turn.
func (m *Metrics) observeTurn(claim *store.Claim, out engines.Outcome) {
	if m == nil {
		return
	}
	m.turns.WithLabelValues(claim.Record.Recipe, string(out.Next)).Inc()
	m.rounds.Observe(float64(out.Rounds))
	if out.Fitted > 0 {
		m.fitted.WithLabelValues(claim.Record.Recipe).Add(float64(out.Fitted))
	}
	if out.TooLong > 0 {
		m.tooLong.WithLabelValues(claim.Record.Recipe).Add(float64(out.TooLong))
	}
	if !out.ResumeAt.IsZero() {
		m.daySpent.WithLabelValues(claim.Record.Recipe).Inc()
	}
	for _, e := range out.Events[len(claim.Current):] {
		if c := e.ValidationCorrection; c != nil {
			m.corrections.WithLabelValues(c.Validator).Inc()
		}
	}
	// All of the turn's calls, an interrupted turn's before the claim too:
	// as the process's totals, they count when the turn is committed.
	if in, outTokens := conversation.TokensUsed(out.Events); in+outTokens > 0 {
		m.recipeTokens.WithLabelValues(claim.Record.Recipe, "input").Add(float64(in))
		m.recipeTokens.WithLabelValues(claim.Record.Recipe, "output").Add(float64(outTokens))
	}
}

// observeApprovals records the approvals the committed turn asked for and
// the decisions it applied, from the events of this run of it.
func (m *Metrics) observeApprovals(claim *store.Claim, out engines.Outcome) {
	if m == nil {
		return
	}
	recipe := claim.Record.Recipe
	for _, e := range out.Events[len(claim.Current):] {
		switch {
		case e.ApprovalRequested != nil:
			m.approvals.WithLabelValues(recipe, "requested").Add(float64(len(e.ApprovalRequested.Calls)))
		case e.ApprovalDecided != nil:
			outcome := "approved"
			switch {
			case e.By == store.ApprovalTimeout:
				outcome = "timed_out"
			case e.ApprovalDecided.Decision == conversation.Reject:
				outcome = "rejected"
			}
			m.approvals.WithLabelValues(recipe, outcome).Inc()
			for _, p := range claim.Record.Approvals {
				if p.CallID == e.ApprovalDecided.CallID && !p.Requested.IsZero() {
					m.decisionTime.Observe(e.At.Sub(p.Requested).Seconds())
				}
			}
		}
	}
}

// observeTrim records the events the commit of claim's turn deleted from
// the log (rec is the record it left).
func (m *Metrics) observeTrim(claim *store.Claim, rec store.Record) {
	if m == nil || rec.Trimmed <= claim.Record.Trimmed {
		return
	}
	m.trimmed.WithLabelValues(claim.Record.Recipe).Add(float64(rec.Trimmed - claim.Record.Trimmed))
}

// observeClaim records how a turn started: the messages it drained and how
// long they waited, and whether it was taken over from a stopped node.
func (m *Metrics) observeClaim(claim *store.Claim) {
	if m == nil {
		return
	}
	if claim.Recovered {
		m.takeovers.Inc()
		return
	}
	var start time.Time
	drained := 0
	for _, e := range claim.Current {
		switch {
		case e.TurnStart != nil:
			start = e.At
		case e.InboxMessage != nil && !start.IsZero():
			drained++
			m.wakeLatency.Observe(start.Sub(e.At).Seconds())
		}
	}
	m.drained.Observe(float64(drained))
}

// history counts a turn whose history came from source: kept or read_back.
func (m *Metrics) history(source string) {
	if m != nil {
		m.histories.WithLabelValues(source).Inc()
	}
}

// inboxFull counts a message of kind its full inbox did not take.
func (m *Metrics) inboxFull(kind conversation.Kind) {
	if m != nil {
		m.refused.WithLabelValues(string(kind)).Inc()
	}
}

// outcome records a turn that ended without its engine's outcome.
func (m *Metrics) outcome(recipe, outcome string) {
	if m != nil {
		m.turns.WithLabelValues(recipe, outcome).Inc()
	}
}

// observeModelCall records a model call of provider (as the recipe names
// it) and model that took elapsed, its first text or tool call after first
// (0: none came), after retries retries, with usage, and failed with an
// error of kind (errorKind; "" when it did not). A cancelled call is the
// node's doing, not the model's: no error is counted for it.
func (m *Metrics) observeModelCall(provider, model string, elapsed, first time.Duration, retries int, usage llm.Usage, kind string) {
	if m == nil {
		return
	}
	m.modelLatency.WithLabelValues(provider, model).Observe(elapsed.Seconds())
	if first > 0 {
		m.firstToken.WithLabelValues(provider, model).Observe(first.Seconds())
	}
	if retries > 0 {
		m.retries.WithLabelValues(provider, model).Add(float64(retries))
	}
	if kind != "" && kind != "canceled" {
		m.modelErrors.WithLabelValues(provider, model, kind).Inc()
	}
	if usage.InputTokens+usage.OutputTokens > 0 {
		m.tokens.WithLabelValues(provider, model, "input").Add(float64(usage.InputTokens))
		m.tokens.WithLabelValues(provider, model, "output").Add(float64(usage.OutputTokens))
	}
	for tool, n := range usage.Hosted {
		m.hosted.WithLabelValues(provider, tool).Add(float64(n))
	}
}

// live counts n live updates of outcome o.
func (m *Metrics) live(o liveOutcome, n int) {
	if m != nil && n > 0 {
		m.liveOutcomes[o].Add(float64(n))
	}
}

// watchDrop counts a live update a watcher did not get.
func (m *Metrics) watchDrop() {
	if m != nil {
		m.watchDropped.Inc()
	}
}

// redisError counts err when it says Redis could not serve the node
// (store.Unavailable).
func (m *Metrics) redisError(err error) {
	if m != nil && store.Unavailable(err) {
		m.unavailable.WithLabelValues("node").Inc()
	}
}
