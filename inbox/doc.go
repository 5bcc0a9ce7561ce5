// Package inbox owns everything that reaches a process: the messages sent
// to it (Message), the rule that decides what a message does to it (the
// wake rule), the inbox limit, the idempotency of posts, and the Inbox that
// takes them. The rule is written once, here, in Go (OnPost, AfterChange);
// the Redis store runs it as Lua (store/lua/inbox.lua), which store's
// TestLuaWakeRule checks against OnPost, and the store and Memory both pass
// the conformance suite of package inboxtest.
//
// # The wake rule
//
// A message posted to a process, by the process's state and the message's
// kind (OnPost):
//
//	state               user           operator    process_event  schedule    system    approval
//	READY               wakes, L       wakes, L    wakes          wakes, L    wakes     wakes
//	RUNNING, queue      stored, L      steers, L   stored         stored, L   stored    stored
//	RUNNING, steer      steers, L      steers, L   stored         stored, L   stored    stored
//	RUNNING, interrupt  interrupts, L  steers, L   stored         stored, L   stored    stored
//	RUNNING, reject     busy           steers, L   stored         stored, L   stored    stored
//	BLOCKED             unblocks       unblocks    stored         stored, L   stored    unblocks
//	BLOCKED, approval   stored, L      unblocks    stored         stored, L   stored    unblocks
//	PAUSED              stored, L      stored, L   stored         stored, L   stored    stored
//	DONE                closed         closed      closed         closed      closed    closed
//	FAILED              closed         closed      closed         closed      closed    closed
//
// "RUNNING, queue" to "RUNNING, reject" are a RUNNING process by its
// steering (Steering: the recipe's steering.user_messages, kept with the
// process from its creation), which decides what a user's message does
// while a turn runs; in any other state it changes nothing. An operator's
// message steers whatever it is.
//
// "BLOCKED, approval" is a BLOCKED process whose tool calls wait for a
// person's decision (Waiting is WaitingApproval): its turn cannot go on
// before them, so a user's message waits for them, while an operator's
// still wakes it. An approval is taken only for a call that waits for a
// decision and has none yet; any other is refused with ErrNotPending
// (before the table applies, after a repeated idempotency key).
//
// What the cells say:
//
//   - closed: refused with ErrClosed; nothing is stored.
//   - busy: refused with a *BusyError (ErrBusy); nothing is stored, not
//     even the idempotency key, so the message may be sent again with it
//     once the turn has ended.
//   - stored: kept in the inbox for the process's next turn, which drains
//     it; nothing else happens.
//   - steers: stored, and the running turn drains it between its rounds
//     (Steers), so the model reads it at its next call; a turn that ends
//     first leaves it to the next turn, as stored.
//   - interrupts: steers, and the node running the turn is signalled to
//     cut its model call in flight (Effect.Interrupt).
//   - wakes: stored, and the process is put on the wake queue (enqueued)
//     unless it is there already.
//   - unblocks: stored; the process fires lifecycle.UserInput (BLOCKED →
//     READY) by the message's sender (Message.Sender), and is enqueued.
//   - L: counted against the inbox limit. When the inbox already holds its
//     limit of messages, the post is refused with a *FullError (ErrFull)
//     and nothing is stored. A message without L is never refused for a
//     full inbox: a worker's result or a system notice must not be lost,
//     and a user's answer to a BLOCKED process wakes it, so that ticks that
//     piled up meanwhile never lock the user out.
//
// A post is answered in this order: an unknown process is refused with
// ErrNotFound; a repeated idempotency key returns the first message's id
// (dup) and adds nothing, whatever the state, the steering and however
// full the inbox; then the table applies, a refusal (closed, busy) before
// the inbox limit.
//
// After a change of state — every turn's commit, an operator's resume or
// retry — the rule judges what is left in the inbox (AfterChange):
//
//	state              pending                                  effect
//	READY              anything                                 wakes
//	BLOCKED            a user, operator or approval message     unblocks, by the first such message's sender
//	BLOCKED, approval  an operator or approval message          unblocks, by the first such message's sender
//	other              anything                                 nothing
//
// The other transitions (pause, finish, fail) lead to states where the rule
// does nothing. Because every step that leaves a process BLOCKED applies
// it, a BLOCKED process never holds a message that would unblock it, so a
// post only has its own message to judge.
//
// A PAUSED process keeps what it is sent: resume returns it to the state it
// left (RUNNING comes back as READY) and the rule judges the inbox then, as
// if the messages had just arrived.
//
// # The wake queue
//
// A process is on the wake queue at most once: its queued mark is set when
// it is enqueued and cleared by the claim that takes the wake, whether the
// claim starts a turn (which drains the inbox whole) or finds the process
// no longer READY. Pausing or closing a process leaves the mark alone.
//
// # What it must not know
//
// inbox knows conversation's message kinds and the lifecycle; it knows no
// Redis, no HTTP and no store, and runs no turn. Memory plays a claim and
// the turn's end only as far as the rule needs them.
package inbox
