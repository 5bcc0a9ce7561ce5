// Package recipes owns the recipe format of brain: the Go types of a recipe,
// strict YAML loading with file:line:col errors, extends, the JSON Schema,
// and the built-in recipes embedded in the binary (default, ford, arthur,
// marvin-worker, web-research). Of brain's own packages it knows only the
// names of the built-in tools (package tools), and of package inbox the cron
// grammar of wakeups and the steerings of steering.user_messages; it knows
// nothing of engines, providers, Redis or HTTP.
//
// # Loading
//
// A recipe file goes through these steps; every step reports all the
// problems it finds, each as an Error naming file, line, column, field
// path and a fix:
//
//  1. size: files over MaxFileSize (1 MiB) are refused before parsing;
//  2. YAML syntax (go.yaml.in/yaml/v3), one document, not empty; duplicate
//     keys and merge keys (<<) are refused;
//  3. the JSON Schema of Schema(), generated from the Go types: unknown
//     fields (with "did you mean"), types, enums, ranges, patterns. Schema
//     errors are mapped back to the YAML node they concern and rewritten
//     in our own words;
//  4. extends: the parent is NAME.yaml next to the file, then the built-in
//     recipe NAME (a recipe that extends its own name builds on the
//     built-in recipe, to override it). Mappings merge deeply; lists and
//     scalars replace. Cycles are reported with their chain; problems of a
//     parent are reported at the parent's file;
//  5. checks of the merged recipe: model and model.provider present, name
//     matching the file name, tool names (built-in, or server.tool and
//     server.* of a server in mcp_servers), approvals (not on respond,
//     finish_task or tell_user; a timeout of at most 7 days), MCP servers,
//     turn_end against the engine and the tool pool, cron expressions, link
//     templates.
//
// Step 5 runs once steps 1 to 4 passed for the file and its parents: a
// recipe whose shape is wrong is not checked for meaning.
//
// A tool entry may carry `approval: required` or `approval: {by: user,
// timeout: 1h}`: its calls then wait for an operator's (the default) or the
// user's decision before they run; Recipe.ApprovalFor says which tools do.
//
// # Defaults
//
// Fields hold what the files say. The methods apply the defaults: engine
// chat; turn_end respond for chat and finish_task for worker;
// validation.max_corrections 2; data_relay 500 and 200 characters;
// limits.max_rounds 40; no turn timeout; limits.max_depth 3 (workers nest
// at most 3 deep below a top-level process) and limits.max_workers 5
// (spawn_worker calls per turn); limits.max_context_tokens 100,000 (what
// one model call is shown of the conversation); no limits.max_tokens (what
// a process may spend in all); steering.user_messages queue (a user's
// message sent while a turn runs waits for the next turn; an operator's
// steers that turn whatever the recipe says). Provider "default" stands for the first
// configured provider, an empty model name for its default model. One
// default is filled in as the recipe is decoded, so that no reader of an
// Approval can miss it: approval.by operator.
package recipes
