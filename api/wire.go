package api

import (
	"encoding/json"
	"time"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/store"
	"github.com/engine-brain/brain/tools"
)

// Process is a process record on the wire.
type Process struct {
	ID     string `json:"id"`
	Recipe string `json:"recipe"`
	Engine string `json:"engine"`
	// State is READY, RUNNING, BLOCKED, PAUSED, DONE or FAILED.
	State string `json:"state"`
	// PausedFrom is the state a PAUSED process left.
	PausedFrom string `json:"paused_from,omitempty"`
	// Parent is the process that spawned this one (a worker's), if any.
	Parent string `json:"parent,omitempty"`
	Depth  int    `json:"depth"`
	Owner  string `json:"owner,omitempty"`
	// Version counts the record's lifecycle changes.
	Version int64 `json:"version"`
	// Queued says the process waits on the wake queue.
	Queued    bool              `json:"queued"`
	CreatedAt time.Time         `json:"created_at"`
	UpdatedAt time.Time         `json:"updated_at"`
	Metadata  map[string]string `json:"metadata,omitempty"`
	// Inbox counts the messages waiting in the inbox (a BLOCKED process
	// keeps worker results and schedule ticks there until a user or
	// operator message wakes it). GET /v1/processes and
	// GET /v1/processes/{id} report it; other answers leave it out.
	Inbox *int `json:"inbox,omitempty"`
	// Tokens are what the process's model calls have used, as their
	// providers reported it (its workers count their own); absent before
	// the first call that reported usage.
	Tokens *Tokens `json:"tokens,omitempty"`
	// EventsTrimmed counts the events deleted from the start of the log
	// because its recipe keeps fewer (limits.max_log_events); absent when
	// none were.
	EventsTrimmed int64 `json:"events_trimmed,omitempty"`
	// WaitingFor is "approval" from the end of a turn whose tool calls wait
	// for a person's decision (the process is BLOCKED until one comes) to
	// the end of the turn that applies the decisions; absent otherwise.
	WaitingFor string `json:"waiting_for,omitempty"`
	// Approvals are those calls, in the order the model made them: all of
	// them for operators, for a user only those she may decide (by "user"),
	// so that a user may see waiting_for with none. A call decided stays
	// until the turn its decision wakes has applied it.
	Approvals []PendingCall `json:"approvals,omitempty"`
	// Pipeline is where the pipeline of a process whose recipe has phases
	// (engine vogon) stands, read from its log's phase changes. Only
	// GET /v1/processes/{id} reports it.
	Pipeline *Pipeline `json:"pipeline,omitempty"`
	// Steering is what a user's message does while a turn runs, its
	// recipe's steering.user_messages when the process was created:
	// "queue", "steer", "interrupt" or "reject" (such a message is then
	// refused, 409 busy).
	Steering string `json:"steering,omitempty"`
}

// Pipeline is where a phased process's pipeline stands: the phase that runs
// or waits, and the results of its newest run's phases, as its log's
// phase_change events say.
type Pipeline struct {
	// Phase is the phase the process is in (it runs, waits for the user,
	// or waits for the approval of its result: waiting_for); absent when
	// none is: the pipeline has not started, its last phase ended, or it
	// failed.
	Phase string `json:"phase,omitempty"`
	// Since is how the process came into Phase, or out of the last one:
	// start, done, retry, back_to or failed; absent before the first
	// phase change.
	Since string `json:"since,omitempty"`
	// Phases are the recipe's phases in order, each with its result once
	// it passed its gate (and its approval) in the pipeline's newest run.
	Phases []PhaseResult `json:"phases"`
}

// PhaseResult is a phase of a pipeline and its result.
type PhaseResult struct {
	Name string `json:"name"`
	// Result is the phase's newest result that passed, any JSON; absent
	// while it has none in this run.
	Result json.RawMessage `json:"result,omitempty"`
	// PassedAt is when that result passed.
	PassedAt *time.Time `json:"passed_at,omitempty"`
}

// pipelineOf reads the pipeline of a process of phases from its log: the
// newest phase change says where it stands, the changes since the newest
// start (a new run: a chat-like pipeline starts again with each message)
// the results.
func pipelineOf(phases []recipes.Phase, log []conversation.Event) *Pipeline {
	p := &Pipeline{Phases: make([]PhaseResult, len(phases))}
	for i, ph := range phases {
		p.Phases[i].Name = ph.Name
	}
	for _, e := range log {
		pc := e.PhaseChange
		if pc == nil {
			continue
		}
		if pc.Reason == conversation.PhaseStart {
			for i := range p.Phases {
				p.Phases[i].Result, p.Phases[i].PassedAt = nil, nil
			}
		}
		if pc.Reason == conversation.PhaseDone {
			for i := range p.Phases {
				if p.Phases[i].Name == pc.From {
					at := e.At.UTC()
					p.Phases[i].Result, p.Phases[i].PassedAt = pc.Result, &at
				}
			}
		}
		p.Phase, p.Since = pc.To, pc.Reason
	}
	return p
}

// PendingCall is a tool call that waits for a person's decision before it
// runs (POST /v1/processes/{id}/approvals/{call_id} decides it).
type PendingCall struct {
	CallID string `json:"call_id"`
	Tool   string `json:"tool"`
	// Arguments are the call's arguments, a JSON object.
	Arguments json.RawMessage `json:"arguments"`
	// By is who may decide: "user" (the process's owner; operators too) or
	// "operator".
	By          string    `json:"by"`
	RequestedAt time.Time `json:"requested_at"`
	// Deadline, when set, is when the call is rejected if nobody decided
	// it (the recipe's approval.timeout).
	Deadline *time.Time `json:"deadline,omitempty"`
}

// pendingCalls returns the calls of r waiting for approval that who may
// decide. The call key stays out: it is the runtime's, not the approver's.
func pendingCalls(r store.Record, who identity) []PendingCall {
	var out []PendingCall
	for _, c := range r.Approvals {
		if !who.mayDecide(c) {
			continue
		}
		p := PendingCall{CallID: c.CallID, Tool: c.Name, Arguments: c.Arguments, By: c.By, RequestedAt: c.Requested.UTC()}
		if len(p.Arguments) == 0 {
			p.Arguments = json.RawMessage(`{}`)
		}
		if c.Deadline != nil {
			d := c.Deadline.UTC()
			p.Deadline = &d
		}
		out = append(out, p)
	}
	return out
}

// PendingApproval is an entry of GET /v1/approvals: a tool call waiting for
// a decision, with the process it belongs to.
type PendingApproval struct {
	Process string `json:"process"`
	Recipe  string `json:"recipe"`
	Owner   string `json:"owner,omitempty"`
	PendingCall
}

// ApprovalList is the body of GET /v1/approvals: the calls waiting for a
// decision the caller may take, oldest first.
type ApprovalList struct {
	Approvals []PendingApproval `json:"approvals"`
}

// ApprovalRequest is the body of POST
// /v1/processes/{id}/approvals/{call_id}: approve lets the call run, reject
// refuses it. Reason is optional; the log keeps it, and the model reads a
// rejection's as the call's error result.
type ApprovalRequest struct {
	Decision conversation.Decision `json:"decision"`
	Reason   string                `json:"reason,omitempty"`
}

// Tokens counts the tokens of model calls.
type Tokens struct {
	Input  int64 `json:"input"`
	Output int64 `json:"output"`
	// Day is the last UTC day (YYYY-MM-DD) whose calls used some, and
	// DayTotal how many they used, input and output: what the recipe's
	// limits.max_tokens_per_day bounds on that day.
	Day      string `json:"day,omitempty"`
	DayTotal int64  `json:"day_total,omitempty"`
}

// DeletedProcess is the answer of DELETE /v1/processes/{id}: the process
// as it was and the workers deleted with it.
type DeletedProcess struct {
	Process
	// Workers are the ids of the workers deleted with the process (theirs
	// too, deepest first).
	Workers []string `json:"deleted_workers,omitempty"`
}

// processWithInbox is processOf with the inbox depth, for the answers of
// the store's Get and List, which read it.
func processWithInbox(r store.Record, who identity) Process {
	p := processOf(r, who)
	p.Inbox = &r.Inbox
	return p
}

// processOf is record r as who sees it.
func processOf(r store.Record, who identity) Process {
	p := Process{
		ID: r.ID, Recipe: r.Recipe, Engine: r.Engine,
		State: string(r.Status.State), PausedFrom: string(r.Status.PausedFrom),
		Parent: r.Parent, Depth: r.Depth, Owner: r.Owner, Version: r.Version, Queued: r.Queued,
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(), Metadata: r.Metadata, EventsTrimmed: r.Trimmed,
		WaitingFor: string(r.Waiting), Approvals: pendingCalls(r, who), Steering: string(r.Steering),
	}
	if r.Tokens != (store.Tokens{}) {
		p.Tokens = &Tokens{Input: r.Tokens.Input, Output: r.Tokens.Output, DayTotal: r.Tokens.OfDay}
		if !r.Tokens.Day.IsZero() {
			p.Tokens.Day = r.Tokens.Day.Format(time.DateOnly)
		}
	}
	return p
}

// CreateRequest is the body of POST /v1/processes.
type CreateRequest struct {
	Recipe string `json:"recipe"`
	// Input, when set, is the first user message: the process starts
	// READY. Without it the process waits BLOCKED for the user.
	Input    string            `json:"input,omitempty"`
	Metadata map[string]string `json:"metadata,omitempty"`
	// IdempotencyKey, when set, is sent as the Idempotency-Key header: a
	// create repeated with it returns the process the first made (and the
	// client's CreateProcess tries again as Send does).
	IdempotencyKey string `json:"-"`
}

// ProcessPage is a page of GET /v1/processes.
type ProcessPage struct {
	Processes []Process `json:"processes"`
	// Next is the cursor of the next page (after=), "" on the last page.
	// A user's page holds only the user's processes and may be shorter
	// than the limit (even empty) before the last page.
	Next string `json:"next"`
}

// MessageRequest is the body of POST .../messages and .../steer.
type MessageRequest struct {
	Content string `json:"content"`
}

// MessageAccepted answers a posted message with its inbox id.
type MessageAccepted struct {
	MessageID string `json:"message_id"`
}

// EventPage is a page of GET .../events.
type EventPage struct {
	Events []conversation.Event `json:"events"`
	// Next is the id of the last log event the page covered (in the user
	// view, perhaps one filtered out), to pass as after= for the next page;
	// it is the request's after when the log had nothing more.
	Next string `json:"next"`
}

// InboxMessage is a message waiting in a process's inbox.
type InboxMessage struct {
	ID      string    `json:"id"`
	Kind    string    `json:"kind"`
	From    string    `json:"from,omitempty"`
	Content string    `json:"content"`
	At      time.Time `json:"at"`
}

// InboxList is the body of GET /v1/processes/{id}/inbox: the messages its
// next turn drains, oldest first.
type InboxList struct {
	Messages []InboxMessage `json:"messages"`
}

// Timer is a timer of a process: when it is due, its Message is posted to
// the process's inbox as a schedule message. A Cron timer then waits for
// its next time; a one-shot timer (At) is gone.
type Timer struct {
	ID      string     `json:"id"`
	Cron    string     `json:"cron,omitempty"`
	At      *time.Time `json:"at,omitempty"`
	Message string     `json:"message"`
	Due     time.Time  `json:"due"`
	// Rejects is set on the timer of a tool call's approval deadline
	// instead of a Message: the call it rejects when due, unless someone
	// decided it first.
	Rejects string `json:"rejects,omitempty"`
}

func timerOf(t store.Timer) Timer {
	out := Timer{ID: t.ID, Cron: t.Cron, Message: t.Message, Due: t.Due.UTC()}
	if t.Decision != nil {
		out.Rejects = t.Decision.CallID
	}
	if !t.At.IsZero() {
		at := t.At.UTC()
		out.At = &at
	}
	return out
}

// TimerList is the body of GET /v1/processes/{id}/timers: the process's
// timers by due time.
type TimerList struct {
	Timers []Timer `json:"timers"`
}

// TimerRequest is the body of POST /v1/processes/{id}/timers: exactly one
// of In (once, after a delay such as "10m"), At (once, at an RFC 3339
// time) and Cron (repeatedly, at the times of a 5-field cron expression),
// and the Message to post.
type TimerRequest struct {
	In      string `json:"in,omitempty"`
	At      string `json:"at,omitempty"`
	Cron    string `json:"cron,omitempty"`
	Message string `json:"message"`
}

// wakeup checks r as the schedule_wakeup tool checks its arguments.
func (r TimerRequest) wakeup() (tools.Wakeup, error) {
	given := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	return tools.WakeupArgs{In: given(r.In), At: given(r.At), Cron: given(r.Cron), Message: r.Message}.Wakeup("the timer")
}

// RecipeSummary is one entry of GET /v1/recipes.
type RecipeSummary struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Engine      string `json:"engine"`
	Extends     string `json:"extends,omitempty"`
}

// RecipeList is the body of GET /v1/recipes and POST /v1/recipes/reload.
type RecipeList struct {
	Recipes []RecipeSummary `json:"recipes"`
}

func recipeList(lib *recipes.Library) RecipeList {
	list := RecipeList{Recipes: []RecipeSummary{}}
	if lib == nil {
		return list
	}
	for _, name := range lib.Names() {
		r, err := lib.Get(name)
		if err != nil {
			continue // a name of Names always resolves
		}
		list.Recipes = append(list.Recipes, RecipeSummary{
			Name: r.Name, Description: r.Description, Engine: string(r.EngineKind()), Extends: r.Extends,
		})
	}
	return list
}

// status is the body of /healthz and /readyz.
type status struct {
	Status string `json:"status"`
}
