package recipes

import (
	"maps"
	"slices"
	"time"

	"github.com/engine-brain/brain/inbox"
)

// Engine names the Go code that runs a recipe's turns.
type Engine string

// The engines a recipe can name.
const (
	// EngineChat runs a conversation with a user: every turn ends with the
	// respond tool (or, in natural mode, with free text).
	EngineChat Engine = "chat"
	// EngineWorker runs a task for a parent process and ends it with the
	// finish_task tool, whose result reaches the parent's inbox.
	EngineWorker Engine = "worker"
)

// TurnEnd says how the model ends a turn.
type TurnEnd string

// The ways a turn can end.
const (
	// TurnEndRespond: the turn ends with a lone call to the respond tool,
	// whose awaiting_user_input flag chooses BLOCKED or READY. The default
	// of the chat engine.
	TurnEndRespond TurnEnd = "respond"
	// TurnEndFinishTask: the turn ends with a call to the finish_task tool,
	// which hands the task's result to the parent process. The default of the
	// worker engine.
	TurnEndFinishTask TurnEnd = "finish_task"
	// TurnEndNatural: the legacy mode. The model's final free text is the
	// answer and the process goes BLOCKED (chat) or finishes (worker).
	TurnEndNatural TurnEnd = "natural"
)

// Defaults applied by the accessors when a recipe leaves a field out.
const (
	DefaultMaxCorrections     = 2
	DefaultMinToolResultChars = 500
	DefaultMaxReplyChars      = 200
	DefaultMaxRounds          = 40
	DefaultMaxDepth           = 3
	DefaultMaxWorkers         = 5
	DefaultMaxContextTokens   = 100_000
)

// The range of limits.max_context_tokens (the schema's tag on
// Limits.MaxContextTokens says the same), also that of a provider's
// max_context_tokens in brain serve's configuration.
const (
	MinContextTokens = 1000
	MaxContextTokens = 10_000_000
)

// The range of limits.max_log_events (the schema's tag on
// Limits.MaxLogEvents says the same), also that of brain serve's
// max_log_events, which applies to recipes that set none.
const (
	MinLogEvents = 100
	MaxLogEvents = 100_000_000
)

// DefaultProvider is the provider name that stands for the first provider
// configured on the server.
const DefaultProvider = "default"

// Recipe is the declarative configuration of an engine process: the model,
// its system prompt, its tool pool, validation, wakeups and limits.
//
// The fields hold what the recipe file says (after extends is resolved);
// the methods apply the defaults, so callers should prefer them to reading
// optional fields directly.
type Recipe struct {
	Name         string       `yaml:"name" json:"name" jsonschema:"required,minLength=1,maxLength=64,pattern=^[a-z0-9][a-z0-9_-]*$" jsonschema_description:"Name of the recipe: lowercase letters, digits, '-' and '_'. It must match the file name (ford.yaml holds the recipe ford). Never inherited through extends."`
	Description  string       `yaml:"description,omitempty" json:"description,omitempty" jsonschema_description:"One or two sentences for people choosing a recipe."`
	Engine       Engine       `yaml:"engine,omitempty" json:"engine,omitempty" jsonschema:"minLength=1,maxLength=64,pattern=^[a-z0-9][a-z0-9_-]*$,default=chat" jsonschema_description:"The engine kind that runs the turns, one the nodes register: built in are 'chat', which talks with a user and ends turns with respond, and 'worker', which runs a task for a parent process and ends it with finish_task."`
	Extends      string       `yaml:"extends,omitempty" json:"extends,omitempty" jsonschema:"minLength=1,maxLength=64,pattern=^[a-z0-9][a-z0-9_-]*$" jsonschema_description:"Name of a parent recipe, looked up as NAME.yaml in the same directory, then among the built-in recipes. Mappings are merged deeply, lists and scalars of this file replace the parent's."`
	Model        Model        `yaml:"model,omitempty" json:"model,omitzero" jsonschema_description:"The model that runs the turns. Required (here or in a parent recipe)."`
	SystemPrompt string       `yaml:"system_prompt,omitempty" json:"system_prompt,omitempty" jsonschema_description:"The recipe's part of the system prompt: the model's role, what it knows and how it works. The engine adds its contract (how a turn ends, such as the respond convention of chat recipes) after it; see contract."`
	Tools        []ToolRef    `yaml:"tools,omitempty" json:"tools,omitempty" jsonschema_description:"The tool pool: built-in tool names, 'server.tool' or 'server.*' for tools of a server in mcp_servers, or {name, config, approval}."`
	MCPServers   []MCPServer  `yaml:"mcp_servers,omitempty" json:"mcp_servers,omitempty" jsonschema_description:"MCP servers whose tools the tool pool may name as 'server.tool' or 'server.*'."`
	Validation   Validation   `yaml:"validation,omitempty" json:"validation,omitzero" jsonschema_description:"Structural checks of each turn (no tool call, data relay too brief) that ask the model to correct itself."`
	TurnEnd      TurnEnd      `yaml:"turn_end,omitempty" json:"turn_end,omitempty" jsonschema:"enum=respond,enum=finish_task,enum=natural" jsonschema_description:"How a turn ends: 'respond' (a lone respond call; default for chat), 'finish_task' (a finish_task call; default for worker) or 'natural' (legacy: the final free text is the answer)."`
	Steering     Steering     `yaml:"steering,omitempty" json:"steering,omitzero" jsonschema_description:"What a message sent while a turn runs does to that turn."`
	Wakeup       Wakeup       `yaml:"wakeup,omitempty" json:"wakeup,omitzero" jsonschema_description:"Scheduled messages posted into the process's inbox."`
	Limits       Limits       `yaml:"limits,omitempty" json:"limits,omitzero" jsonschema_description:"Bounds of one turn and of the workers a process may start."`
	Presentation Presentation `yaml:"presentation,omitempty" json:"presentation,omitzero" jsonschema_description:"Settings of the present_results tool."`
	A2A          A2A          `yaml:"a2a,omitempty" json:"a2a,omitzero" jsonschema_description:"Whether the recipe is offered to other agents over the A2A protocol, and the skills its agent card lists."`
	Contract     Contract     `yaml:"contract,omitempty" json:"contract,omitzero" jsonschema_description:"The engine's contract text, which the engine adds to system_prompt to tell the model how a turn ends (the respond convention of chat, the finish_task rule of workers). Left out, the engine's own text; set, it replaces it, and must still name the tool that ends the turn."`

	// ResultSchema is a worker's result_schema (see engines/worker).
	ResultSchema map[string]any `yaml:"result_schema,omitempty" json:"result_schema,omitempty" jsonschema_description:"Worker recipes: a JSON Schema (draft 2020-12 unless it says $schema) that the result of finish_task must match, as a JSON text. A result that does not match is refused with the validator's errors, and the model tries again within validation.max_corrections; the parent's process_event carries the parsed JSON as data."`
	Phases       []Phase        `yaml:"phases,omitempty" json:"phases,omitempty" jsonschema_description:"The pipeline of a recipe with engine 'vogon': phases run in order, each with its own prompt and tools, ended by phase_done {result} once the result passes the phase's gate."`
	Heads        []Head         `yaml:"heads,omitempty" json:"heads,omitempty" jsonschema:"minItems=2,maxItems=8" jsonschema_description:"Engine zaphod only: the heads every turn asks the same thing concurrently, each with its own model and system prompt. Two to eight, of distinct names."`
	Synthesis    Synthesis      `yaml:"synthesis,omitempty" json:"synthesis,omitzero" jsonschema_description:"Engine zaphod only (required there): the call that composes the turn's answer from the heads' answers and ends with respond."`
}

// Contract replaces the text an engine adds to the recipe's system prompt.
type Contract struct {
	Text string `yaml:"text,omitempty" json:"text,omitempty" jsonschema:"minLength=1" jsonschema_description:"Replaces the engine's contract text, after system_prompt. It must name the tool that ends a turn (respond for chat, finish_task for workers)."`
}

// ValidationOn reports whether the validators check the recipe's turns:
// validation.enabled when the recipe (or a parent) sets it, else on for
// recipes whose turns end with respond and off otherwise (a worker's task,
// the natural mode, where no_tool_call cannot apply).
func (r *Recipe) ValidationOn() bool {
	if e := r.Validation.Enabled; e != nil {
		return *e
	}
	return r.TurnEndMode() == TurnEndRespond
}

// EngineKind returns the recipe's engine, EngineChat when none is named.
func (r *Recipe) EngineKind() Engine {
	if r.Engine == "" {
		return EngineChat
	}
	return r.Engine
}

// TurnEndMode returns how the recipe's turns end: the turn_end field, or
// the engine's default (TurnEndRespond for chat, TurnEndFinishTask for
// worker).
func (r *Recipe) TurnEndMode() TurnEnd {
	if r.TurnEnd != "" {
		return r.TurnEnd
	}
	if r.EngineKind() == EngineWorker {
		return TurnEndFinishTask
	}
	return TurnEndRespond
}

// HasTool reports whether the tool pool names the tool name exactly.
func (r *Recipe) HasTool(name string) bool {
	return slices.ContainsFunc(r.Tools, func(t ToolRef) bool { return t.Name == name })
}

// Clone returns a deep copy of r.
func (r *Recipe) Clone() *Recipe {
	c := *r
	c.Model = r.Model.clone()
	c.Tools = make([]ToolRef, len(r.Tools))
	for i, t := range r.Tools {
		c.Tools[i] = ToolRef{Name: t.Name, Config: cloneMap(t.Config), Approval: clonePtr(t.Approval)}
	}
	if r.Tools == nil {
		c.Tools = nil
	}
	c.MCPServers = make([]MCPServer, len(r.MCPServers))
	for i, s := range r.MCPServers {
		s.Args = slices.Clone(s.Args)
		s.Env = maps.Clone(s.Env)
		c.MCPServers[i] = s
	}
	if r.MCPServers == nil {
		c.MCPServers = nil
	}
	c.Validation.MaxCorrections = clonePtr(r.Validation.MaxCorrections)
	c.Validation.Enabled = clonePtr(r.Validation.Enabled)
	c.Validation.DataRelay.MinToolResultChars = clonePtr(r.Validation.DataRelay.MinToolResultChars)
	c.Validation.DataRelay.MaxReplyChars = clonePtr(r.Validation.DataRelay.MaxReplyChars)
	c.Limits.MaxWorkers = clonePtr(r.Limits.MaxWorkers)
	c.Wakeup.Schedules = slices.Clone(r.Wakeup.Schedules)
	c.Presentation.Links = maps.Clone(r.Presentation.Links)
	c.A2A.Skills = make([]A2ASkill, len(r.A2A.Skills))
	for i, sk := range r.A2A.Skills {
		sk.Tags, sk.Examples = slices.Clone(sk.Tags), slices.Clone(sk.Examples)
		c.A2A.Skills[i] = sk
	}
	if r.A2A.Skills == nil {
		c.A2A.Skills = nil
	}
	c.ResultSchema = cloneMap(r.ResultSchema)
	c.Phases = clonePhases(r.Phases)
	c.Heads = cloneHeads(r.Heads)
	c.Synthesis.Model = r.Synthesis.Model.clone()
	return &c
}

// baseURLPattern is the schema's pattern of Model.BaseURL (kept equal to
// its jsonschema tag): an http or https URL without user, password, query
// or fragment.
const baseURLPattern = `^https?://[^\s/?#@]+(/[^\s?#]*)?$`

// Model names the model that runs a recipe's turns.
type Model struct {
	Provider    string     `yaml:"provider,omitempty" json:"provider,omitempty" jsonschema:"minLength=1" jsonschema_description:"Provider name from the server configuration; 'default' is the first configured provider. Required (here or in a parent recipe)."`
	Name        string     `yaml:"name,omitempty" json:"name,omitempty" jsonschema:"minLength=1" jsonschema_description:"Model name at the provider; left out, the provider's configured default model."`
	BaseURL     string     `yaml:"base_url,omitempty" json:"base_url,omitempty" jsonschema:"pattern=^https?://[^\\s/?#@]+(/[^\\s?#]*)?$" jsonschema_description:"Root of an OpenAI-compatible API to reach instead of the provider's own, including its version path, such as http://127.0.0.1:11434/v1. The provider's settings apply, its API key included, so the key is sent there. With provider 'openai' and no such provider configured, the server is reached without a key. No user, password, query or fragment."`
	Temperature *float64   `yaml:"temperature,omitempty" json:"temperature,omitempty" jsonschema:"minimum=0,maximum=2" jsonschema_description:"Sampling temperature; left out, the provider's default."`
	MaxTokens   *int       `yaml:"max_tokens,omitempty" json:"max_tokens,omitempty" jsonschema:"minimum=1,maximum=1000000" jsonschema_description:"Upper bound of output tokens per model call; left out, the provider's default."`
	HostedTools []string   `yaml:"hosted_tools,omitempty" json:"hosted_tools,omitempty" jsonschema:"uniqueItems=true,minLength=1,pattern=^[a-z][a-z0-9_]*$" jsonschema_description:"Tools the provider runs itself, such as web_search. Their activity is recorded as hosted_activity events, not tool calls."`
	Fallbacks   []Fallback `yaml:"fallbacks,omitempty" json:"fallbacks,omitempty" jsonschema:"maxItems=5" jsonschema_description:"Models to try, in order, when the model fails after its retries (an outage, an exhausted quota, a refused key) before answering. The other model settings (temperature, max_tokens, hosted_tools) apply to them too."`
}

// Fallback names a model to try when the recipe's model fails.
type Fallback struct {
	Provider string `yaml:"provider" json:"provider" jsonschema:"required,minLength=1" jsonschema_description:"Provider name from the server configuration; 'default' is the first configured provider."`
	Name     string `yaml:"name,omitempty" json:"name,omitempty" jsonschema:"minLength=1" jsonschema_description:"Model name at the provider; left out, the provider's configured default model."`
	BaseURL  string `yaml:"base_url,omitempty" json:"base_url,omitempty" jsonschema:"pattern=^https?://[^\\s/?#@]+(/[^\\s?#]*)?$" jsonschema_description:"Root of an OpenAI-compatible API to reach instead of the provider's own, as model.base_url."`
}

// Candidates returns the model followed by its fallbacks, each as a model
// section of its own (the settings other than provider, name and base_url
// are m's).
func (m Model) Candidates() []Model {
	out := make([]Model, 0, 1+len(m.Fallbacks))
	primary := m
	primary.Fallbacks = nil
	out = append(out, primary)
	for _, f := range m.Fallbacks {
		c := primary
		c.Provider, c.Name, c.BaseURL = f.Provider, f.Name, f.BaseURL
		out = append(out, c)
	}
	return out
}

// MCPServer declares an MCP server whose tools a recipe may use. Exactly one
// of Command (a local server over stdio) and URL (a remote server over
// streamable HTTP) is set.
type MCPServer struct {
	Name    string            `yaml:"name" json:"name" jsonschema:"required,minLength=1,maxLength=64,pattern=^[A-Za-z0-9_-]+$" jsonschema_description:"Name of the server, used as the prefix of its tools in the tool pool ('name.tool'). No dots."`
	Command string            `yaml:"command,omitempty" json:"command,omitempty" jsonschema:"minLength=1" jsonschema_description:"Program that runs a local server over stdio. Exactly one of command and url."`
	Args    []string          `yaml:"args,omitempty" json:"args,omitempty" jsonschema_description:"Arguments of command."`
	Env     map[string]string `yaml:"env,omitempty" json:"env,omitempty" jsonschema_description:"Environment variables of command."`
	URL     string            `yaml:"url,omitempty" json:"url,omitempty" jsonschema:"minLength=1" jsonschema_description:"Endpoint of a remote server (streamable HTTP). Exactly one of command and url."`
}

// Validation configures the structural turn checks of the validators
// package. Empty correction texts mean the validators' defaults.
type Validation struct {
	Enabled        *bool      `yaml:"enabled,omitempty" json:"enabled,omitempty" jsonschema_description:"Turns the validators on or off. Left out, they are on for recipes whose turns end with respond (chat's default) and off otherwise; false turns them off."`
	MaxCorrections *int       `yaml:"max_corrections,omitempty" json:"max_corrections,omitempty" jsonschema:"minimum=0,maximum=10,default=2" jsonschema_description:"How many corrections one turn may ask for before the answer is accepted as it is."`
	NoToolCall     NoToolCall `yaml:"no_tool_call,omitempty" json:"no_tool_call,omitzero" jsonschema_description:"The check of a model response without any tool call."`
	DataRelay      DataRelay  `yaml:"data_relay,omitempty" json:"data_relay,omitzero" jsonschema_description:"The check of a reply too brief for the tool results it should relay."`
}

// Corrections returns how many corrections one turn may ask for.
func (v Validation) Corrections() int {
	if v.MaxCorrections == nil {
		return DefaultMaxCorrections
	}
	return *v.MaxCorrections
}

// NoToolCall configures the no_tool_call validator.
type NoToolCall struct {
	Correction string `yaml:"correction,omitempty" json:"correction,omitempty" jsonschema:"minLength=1" jsonschema_description:"Correction text sent to the model instead of the default."`
}

// DataRelay configures the data_relay validator: a respond message of at
// most MaxReply characters after a tool result of at least MinToolResult
// characters in the same turn is refused.
type DataRelay struct {
	MinToolResultChars *int   `yaml:"min_tool_result_chars,omitempty" json:"min_tool_result_chars,omitempty" jsonschema:"minimum=1,maximum=1000000,default=500" jsonschema_description:"Size of a tool result from which the reply must relay it."`
	MaxReplyChars      *int   `yaml:"max_reply_chars,omitempty" json:"max_reply_chars,omitempty" jsonschema:"minimum=0,maximum=1000000,default=200" jsonschema_description:"Size up to which a reply counts as too brief."`
	Correction         string `yaml:"correction,omitempty" json:"correction,omitempty" jsonschema:"minLength=1" jsonschema_description:"Correction text sent to the model instead of the default."`
}

// MinToolResult returns the tool result size, in characters, from which the
// reply must relay the result.
func (d DataRelay) MinToolResult() int {
	if d.MinToolResultChars == nil {
		return DefaultMinToolResultChars
	}
	return *d.MinToolResultChars
}

// MaxReply returns the reply size, in characters, up to which a reply is
// too brief.
func (d DataRelay) MaxReply() int {
	if d.MaxReplyChars == nil {
		return DefaultMaxReplyChars
	}
	return *d.MaxReplyChars
}

// Steering says what a message sent while a turn runs does to that turn. A
// process keeps it from its creation.
type Steering struct {
	UserMessages inbox.Steering `yaml:"user_messages,omitempty" json:"user_messages,omitempty" jsonschema:"enum=queue,enum=steer,enum=interrupt,enum=reject,default=queue" jsonschema_description:"What a user's message does while a turn runs: 'queue' (it waits for the next turn; the default), 'steer' (the turn reads it between its model calls), 'interrupt' (as steer, and the model call in flight is cut short) or 'reject' (it is refused, 409 busy, and nothing is stored). An operator's message always steers."`
}

// User returns what a user's message does while a turn runs: user_messages,
// or inbox.SteeringQueue when the recipe says nothing.
func (s Steering) User() inbox.Steering {
	if s.UserMessages == "" {
		return inbox.SteeringQueue
	}
	return s.UserMessages
}

// Wakeup lists scheduled messages.
type Wakeup struct {
	Schedules []Schedule `yaml:"schedules,omitempty" json:"schedules,omitempty" jsonschema_description:"Messages posted into the inbox on a cron schedule, as inbox messages of kind schedule. They wake a READY process; a BLOCKED one keeps them until a user or operator message wakes it, and the model then reads the ticks of one schedule as one message with their count."`
}

// Schedule posts Message into the process's inbox at the times of Cron.
type Schedule struct {
	Cron    string `yaml:"cron" json:"cron" jsonschema:"required,minLength=1" jsonschema_description:"Five fields (minute hour day-of-month month day-of-week), a descriptor (@yearly, @monthly, @weekly, @daily, @hourly) or '@every DURATION' such as '@every 90m'; an optional 'CRON_TZ=ZONE ' prefix such as 'CRON_TZ=Europe/Berlin ' sets the time zone (UTC otherwise)."`
	Message string `yaml:"message" json:"message" jsonschema:"required,minLength=1" jsonschema_description:"The content of the posted message."`
}

// Limits bound one turn and the workers a process may start.
//
// Depth counts from a top-level process (depth 0): its workers have depth
// 1, theirs depth 2, and so on. A spawn_worker call is refused when the
// new worker's depth would exceed MaxDepth of the calling process's
// recipe, or when the turn has already made MaxWorkers spawn_worker calls.
type Limits struct {
	MaxRounds   int      `yaml:"max_rounds,omitempty" json:"max_rounds,omitempty" jsonschema:"minimum=1,maximum=1000,default=40" jsonschema_description:"Most model calls in one turn; reaching it ends the turn BLOCKED with a notice."`
	TurnTimeout Duration `yaml:"turn_timeout,omitempty" json:"turn_timeout,omitempty" jsonschema_description:"Longest wall-clock time of one turn, such as '5m'; left out, no limit."`
	MaxDepth    int      `yaml:"max_depth,omitempty" json:"max_depth,omitempty" jsonschema:"minimum=1,maximum=10,default=3" jsonschema_description:"How deep a chain of workers below a top-level process may go: a top-level process has depth 0, its workers depth 1, theirs depth 2. spawn_worker is refused when the new worker's depth would exceed the max_depth of the calling process's recipe."`
	MaxWorkers  *int     `yaml:"max_workers,omitempty" json:"max_workers,omitempty" jsonschema:"minimum=0,maximum=100,default=5" jsonschema_description:"Most spawn_worker calls one turn may make; 0 lets the process start no worker."`
	// MaxContextTokens bounds what each model call is shown of the
	// conversation, which otherwise grows with every turn until the model
	// refuses it and the process can no longer answer.
	MaxContextTokens int `yaml:"max_context_tokens,omitempty" json:"max_context_tokens,omitempty" jsonschema:"minimum=1000,maximum=10000000,default=100000" jsonschema_description:"Most tokens of the conversation one model call is shown, estimated at 3 bytes of text a token (the system prompt and tool definitions come on top): set it below the model's context window. A longer conversation is cut from its oldest end: the content of old tool results first, then whole old exchanges; the model is told, and the log keeps everything."`
	// MaxTokens caps what a process may spend on its model: a loop that
	// never ends would otherwise bill for good.
	MaxTokens int64 `yaml:"max_tokens,omitempty" json:"max_tokens,omitempty" jsonschema:"minimum=1000,maximum=1000000000000" jsonschema_description:"Most tokens (input and output, as the providers report them) all the model calls of one process may use; a worker counts its own. Once they are used, the process makes no more calls: it fails with a notice, for an operator to raise the limit and retry it. Left out, no limit."`
	// MaxTokensPerDay caps what a process may spend in a day: one that
	// lives for long (a cron tick an hour, say) needs a budget that comes
	// back, not one it spends once and fails on.
	MaxTokensPerDay int64 `yaml:"max_tokens_per_day,omitempty" json:"max_tokens_per_day,omitempty" jsonschema:"minimum=1000,maximum=1000000000000" jsonschema_description:"Most tokens (input and output) the model calls of one process may use in a UTC day. Once they are used, the process makes no more calls that day: its turns end READY with a notice, and at 00:00 UTC a schedule message wakes it to go on. Left out, no limit."`
	// MaxLogEvents bounds what a process's log keeps in Redis, which
	// otherwise grows with every turn of a process that lives for long.
	MaxLogEvents int `yaml:"max_log_events,omitempty" json:"max_log_events,omitempty" jsonschema:"minimum=100,maximum=100000000" jsonschema_description:"Most events a process's log keeps in Redis. After a turn that takes it beyond, its oldest events are deleted for good (in blocks, so a few more may stay); the model is told the beginning is left out, and the record counts them (trimmed). Left out, the log keeps every event."`
}

// Rounds returns the most model calls one turn may make.
func (l Limits) Rounds() int {
	if l.MaxRounds == 0 {
		return DefaultMaxRounds
	}
	return l.MaxRounds
}

// Timeout returns the longest time of one turn; 0 means no limit.
func (l Limits) Timeout() time.Duration {
	return time.Duration(l.TurnTimeout)
}

// Depth returns the deepest a worker started by a process of this recipe
// may be, counted from the top-level process (depth 0).
func (l Limits) Depth() int {
	if l.MaxDepth == 0 {
		return DefaultMaxDepth
	}
	return l.MaxDepth
}

// ContextTokens returns the most tokens of the conversation one model call
// is shown (estimated, see conversation.Fit).
func (l Limits) ContextTokens() int {
	if l.MaxContextTokens == 0 {
		return DefaultMaxContextTokens
	}
	return l.MaxContextTokens
}

// Workers returns the most spawn_worker calls one turn may make; 0 means
// none.
func (l Limits) Workers() int {
	if l.MaxWorkers == nil {
		return DefaultMaxWorkers
	}
	return *l.MaxWorkers
}

// Presentation configures the present_results tool.
type Presentation struct {
	Links map[string]string `yaml:"links,omitempty" json:"links,omitempty" jsonschema_description:"Link templates by name. The model names a template and gives values for its {placeholders}; the server builds the URL with the values URL-encoded. The model never writes a URL."`
}

// A2A offers a recipe over the A2A protocol: with Expose, the server
// serves an agent card for it at /a2a/{recipe}/.well-known/agent-card.json
// and its tasks (each a process of the recipe) at /a2a/{recipe}.
type A2A struct {
	Expose bool       `yaml:"expose,omitempty" json:"expose,omitempty" jsonschema_description:"Serve an A2A agent card and endpoint for this recipe (default false)."`
	Skills []A2ASkill `yaml:"skills,omitempty" json:"skills,omitempty" jsonschema:"maxItems=50" jsonschema_description:"The skills the agent card lists; ids must be unique."`
}

// skillIDPattern is the schema's pattern of A2ASkill.ID (kept equal to its
// jsonschema tag).
const skillIDPattern = `^[A-Za-z0-9][A-Za-z0-9_.-]*$`

// A2ASkill is a skill of an A2A agent card.
type A2ASkill struct {
	ID          string   `yaml:"id" json:"id" jsonschema:"required,minLength=1,maxLength=64,pattern=^[A-Za-z0-9][A-Za-z0-9_.-]*$" jsonschema_description:"Unique id of the skill within the recipe."`
	Name        string   `yaml:"name" json:"name" jsonschema:"required,minLength=1" jsonschema_description:"Name of the skill, for people."`
	Description string   `yaml:"description" json:"description" jsonschema:"required,minLength=1" jsonschema_description:"What the skill does, for people and for agents choosing one."`
	Tags        []string `yaml:"tags,omitempty" json:"tags,omitempty" jsonschema:"uniqueItems=true" jsonschema_description:"Keywords of the skill."`
	Examples    []string `yaml:"examples,omitempty" json:"examples,omitempty" jsonschema_description:"Example requests the skill serves."`
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func cloneMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	c := make(map[string]any, len(m))
	for k, v := range m {
		c[k] = cloneValue(v)
	}
	return c
}

func cloneValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		return cloneMap(v)
	case []any:
		c := make([]any, len(v))
		for i, e := range v {
			c[i] = cloneValue(e)
		}
		return c
	default:
		return v
	}
}
