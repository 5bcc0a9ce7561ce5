// Package tools owns the tool interface, the registry a recipe's tool list
// builds, argument checks against each tool's JSON Schema, and the built-in
// tools. It knows the conversation's content blocks and nothing of Redis,
// the HTTP API or the lifecycle.
//
// A [Tool] has a [Definition] (name, description, JSON Schema of its
// arguments) and a Call that returns a [Result]: MCP-compatible content
// blocks, each optionally addressed to the user or the assistant. [Func]
// adapts a plain function.
//
// A [Registry] holds the tools of one process. [NewRegistry] compiles every
// schema once; [Registry.Call] checks a model's call (tool known, arguments
// a JSON object matching the schema), runs the tool and never fails: a bad
// call, a tool error and a panic all become an error result whose text is
// written for the model, saying what was wrong and how to fix it. The
// engine sends that text back and the model tries again.
//
// Recipes list tools by name ([Ref]); a [Catalog] of factories turns the
// list into a registry ([Catalog.Build]). [BuiltinCatalog] has the
// built-ins implemented so far that need nothing but their settings:
//
//   - respond ([RespondTool]) ends a turn with the reply to the user. It has no
//     side effect: the engine reads the call with [ParseRespond] and moves
//     the process to BLOCKED or READY. Its result, [RespondResult], carries
//     the message for the user view and an acknowledgement for the model.
//   - tell_user ([TellUserTool]) shows the user a message mid-turn; the model
//     reads only [TellUserAck].
//   - finish_task ([FinishTaskTool]) ends a worker's task, as respond ends a
//     chat turn: the engine reads the call with [ParseFinish] and hands the
//     result to the parent process; the model reads only [FinishAck].
//   - http_fetch (package tools/httpfetch, so that what imports tools pulls
//     no HTTP client; toolset.Builtins adds it) GETs a text document; a
//     recipe may limit it to some hosts (config allow_hosts), which it
//     should for any process that must not reach internal addresses.
//   - present_results ([PresentResultsTool]) shows the user a summary and
//     blocks ([PresentBlock]: metrics, table, chart, links, actions) with a
//     server-built GFM fallback, through [Result.Presentation], which the
//     engine records as a presentation event; the model reads only what was
//     shown and what was dropped or cut. Numbers are formatted and links
//     built by the server, from the recipe's link templates (config links,
//     filled from presentation.links by the chat engine): the model never
//     writes a URL.
//
// The built-ins that act for their process go through the runtime, which
// puts the calling process in each call's context ([WithCaller],
// [CallerFrom]) and adds them to the catalog with its own implementation
// of a small interface:
//
//   - spawn_worker ([SpawnWorkerFactory], a [Spawner]) starts a worker
//     process whose result reaches the caller's inbox later;
//   - schedule_wakeup and cancel_wakeup ([ScheduleWakeupFactory],
//     [CancelWakeupFactory], a [Scheduler]) post messages into the caller's
//     inbox later, once or on a cron schedule.
//
// A node may stop while a tool runs. Tools without effects outside the
// log are [Definition.Replayable]: their round is simply played again.
// spawn_worker and schedule_wakeup are [Definition.Idempotent]: they key
// what they make by the call ([Caller.CallKey], which a resumed turn gives
// the call again), so the engine runs a call left without a result again
// and the second run finds what the first made; so is cancel_wakeup, whose
// second run finds the wakeup cancelled. Any other tool's unanswered call
// is reported to the model as one that may or may not have run.
//
// Until the runtime adds them, a recipe naming them fails to build with
// [ErrNotImplemented].
//
// The names of all built-ins, implemented or not, are the constants of
// names.go ([Respond], [TellUser], ...), so that recipes can be linted
// before every built-in exists; the tools themselves are built by
// [RespondTool], [TellUserTool], [FinishTaskTool] and the catalog.
package tools
