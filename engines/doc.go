// Package engines is what every engine shares: the Engine interface, a
// turn's input (Turn) and result (Outcome), the Checkpointer through which
// an engine makes its progress durable, the Registry of engine kinds, and
// an offline Session that plays an engine's turns in memory.
//
// The runtime (internal/node) picks the engine of a process's turns by its
// recipe's engine kind, in the node's Registry, and nowhere else. Engines
// know nothing of Redis or HTTP: they get a model, a tool registry and a
// Checkpointer, and return the lifecycle event to fire.
//
// # Adding an engine kind
//
//  1. Implement Engine: Run plays one turn (or resumes one: Turn.Current
//     holds what it committed before its node stopped), calls the
//     Checkpointer after each round that does not end the turn, and returns
//     the Outcome: the events not yet checkpointed (Pending) and the
//     lifecycle event (Next: AwaitUser, Continue, Finish or Fail). Engines
//     that end turns with a tool build on engines/rounds, the round loop
//     chat and worker share, with a Contract of their own.
//  2. Own the contract text: what tells the model how a turn ends (chat's
//     respond convention, a worker's finish_task rule) is the engine's,
//     not the recipe's. Give it as Terms (the text, and the tool that ends
//     a turn) from Contract.Terms and from Kind.Terms; the model gets the
//     recipe's system_prompt followed by it (System), unless the recipe
//     replaces it with contract.text, which lint checks names the ending
//     tool (Registry.Linter, Registry.Check). An engine that builds its
//     own requests sends System(recipe, terms) as the system prompt.
//  3. Register it beside the built-in kinds as brain.Config.Registry:
//     engines.NewRegistry(chat.Kind(clock), worker.Kind(clock),
//     zaphod.Kind(clock), engines.Kind{Name: "mine", Engine: e}) (a node
//     refuses a library with recipes of kinds it lacks). Set
//     Kind.Task when its processes work for a parent (spawn_worker starts
//     only those, and their Outcome.Finish reaches the parent's inbox), or
//     Kind.TaskOf when only some of its recipes do (a vogon recipe with
//     turn_end: finish_task): Kind.Tasks says which.
//  4. Recipes name it with `engine: mine`; a node refuses recipes of kinds
//     it lacks, and Config.Engines (brain serve --engines) may name it.
//
// TestCustomEngine, in the root package's engines_test.go, does exactly
// this on a real node.
//
// # Engines of other shapes
//
// engines/vogon runs a gated pipeline on the same round loop: one
// rounds.Run per phase, with the phase's prompt and tools and a Contract
// whose ending tool is phase_done, its result checked against the phase's
// gate. Its state is not kept beside the log but in it (phase_change
// events, committed with the rounds), so Turn.History and Turn.Current are
// all a resumed turn needs; an engine that keeps state of its own should do
// the same rather than ask for new storage. Its Contract uses the round
// loop's two extensions: further tools that end a turn when called alone
// (rounds.Endings: a chat-like phase's respond), and an ending call that
// waits for a person's approval as a gated tool's call does (Ending.Await;
// the decision reaches rounds.Decider: a phase's approval).
//
// Engines of other shapes compose the round loop rather than extend it:
// engines/zaphod runs one rounds.Run per head concurrently, each with a
// contract of its own (the head's respond message or final text is its
// answer), a Checkpointer that collects its rounds and a timeout of its
// own, logs each head's tool calls, usage and answer in one checkpoint as
// it arrives, under By "head:NAME" (conversation.ByHead: events the
// provider and user views leave out), and ends with a chat turn
// (chat.Engine) whose system prompt carries the answers in the recipe's
// order. The round loops it runs are given Turn.Current without the
// heads' events. A section of the recipe naming a model other than its own
// (a head's) is resolved by Turn.Models.
// See docs/ARCHITECTURE.md for where engines sit in the walk of a message.
package engines
