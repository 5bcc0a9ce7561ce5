// Package lifecycle is the process state machine: the states a process can be
// in, the events that move it, and which moves are allowed. It is built on
// github.com/looplab/fsm, hidden behind the typed [State] and [Event]
// constants so callers never pass raw strings.
//
// # States and events
//
//	event       from                             to
//	wake        READY                            RUNNING
//	await_user  RUNNING                          BLOCKED
//	continue    RUNNING                          READY
//	user_input  BLOCKED                          READY
//	pause       READY, RUNNING, BLOCKED          PAUSED (remembers the state it left)
//	resume      PAUSED                           the state it left; RUNNING resumes as READY
//	finish      RUNNING, READY, BLOCKED, PAUSED  DONE
//	fail        RUNNING, PAUSED from RUNNING     FAILED
//	retry       FAILED                           READY
//	recover     RUNNING                          READY (its lease expired)
//
// DONE is terminal: no event leaves it. A self-transition is never allowed.
//
// finish from RUNNING is a worker delivering its result. finish from READY,
// BLOCKED and PAUSED extends the design's lifecycle table: it is an operator
// closing a process that is not running a turn. lifecycle does not check who
// fires an event (by is recorded, not judged): which actor may fire what is
// the caller's policy.
//
// fail from PAUSED is a turn that was running when an operator paused its
// process and then failed: the failure is recorded, not hidden by the pause.
//
// A paused process keeps the state it left in [Status.PausedFrom], so the
// process record must store both fields. resume goes back to that state,
// except that RUNNING resumes as READY (the turn it was running is gone, a
// new wake will start the next one); a PAUSED status with no PausedFrom
// resumes as READY.
//
// # Use
//
// A machine is cheap to build (a few microseconds, no goroutine), so callers
// keep none for idle processes: they build one from the stored [Status] when
// a transition is needed, fire one event, store the new Status and the
// [Transition] record, and drop the machine. [Fire] does exactly that in one
// call; [New] returns a [Machine] for a caller that fires several events in a
// row. Time and the actor are passed in: the package never reads the clock.
//
// A [Machine] is owned by one goroutine: looplab/fsm is not safe for
// concurrent use. The package-level [Fire] and [Can] build their own machine
// on every call and are safe to call from any goroutine.
//
// The machine registers no looplab/fsm callbacks (calling into the FSM from a
// callback deadlocks it); the Transition record is computed around the call
// instead. Cancellation of the context given to Fire is ignored: a transition
// is an in-memory step that happens whole or not at all, and a cancelled
// context would leave looplab/fsm stuck mid-transition for good.
//
// # What it must not know
//
// lifecycle knows nothing of Redis, HTTP, inboxes, leases or engines. It does
// not decide when an event should fire (the runtime, the engines and the API
// do) nor persist anything (store does); it only says whether an event is
// allowed and where it leads.
package lifecycle
