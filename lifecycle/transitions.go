package lifecycle

import "github.com/looplab/fsm"

// The FSM's own state names. Public states map one to one, except PAUSED,
// which is split by the state it left so that resume can be a plain
// looplab/fsm transition with a fixed destination. These names never leave
// the package: [Machine.Status] turns them back into a [Status].
const (
	fsmReady         = string(Ready)
	fsmRunning       = string(Running)
	fsmBlocked       = string(Blocked)
	fsmDone          = string(Done)
	fsmFailed        = string(Failed)
	fsmPaused        = string(Paused) // PausedFrom unknown: resumes as READY
	fsmPausedReady   = string(Paused) + "/" + string(Ready)
	fsmPausedRunning = string(Paused) + "/" + string(Running)
	fsmPausedBlocked = string(Paused) + "/" + string(Blocked)
)

// transitions is the whole lifecycle table, in looplab/fsm's terms. It is
// read by every [New] and never modified.
var transitions = fsm.Events{
	{Name: string(Wake), Src: []string{fsmReady}, Dst: fsmRunning},
	{Name: string(AwaitUser), Src: []string{fsmRunning}, Dst: fsmBlocked},
	{Name: string(Continue), Src: []string{fsmRunning}, Dst: fsmReady},
	{Name: string(UserInput), Src: []string{fsmBlocked}, Dst: fsmReady},

	{Name: string(Pause), Src: []string{fsmReady}, Dst: fsmPausedReady},
	{Name: string(Pause), Src: []string{fsmRunning}, Dst: fsmPausedRunning},
	{Name: string(Pause), Src: []string{fsmBlocked}, Dst: fsmPausedBlocked},

	// RUNNING resumes as READY: the turn it was running is gone.
	{Name: string(Resume), Src: []string{fsmPaused, fsmPausedReady, fsmPausedRunning}, Dst: fsmReady},
	{Name: string(Resume), Src: []string{fsmPausedBlocked}, Dst: fsmBlocked},

	// From RUNNING: a worker's result. From the others: an operator closing
	// a process that is not running a turn.
	{Name: string(Finish), Src: []string{
		fsmRunning, fsmReady, fsmBlocked,
		fsmPaused, fsmPausedReady, fsmPausedRunning, fsmPausedBlocked,
	}, Dst: fsmDone},

	// A turn that was running when its process was paused can still fail.
	{Name: string(Fail), Src: []string{fsmRunning, fsmPausedRunning}, Dst: fsmFailed},
	{Name: string(Retry), Src: []string{fsmFailed}, Dst: fsmReady},
	{Name: string(Recover), Src: []string{fsmRunning}, Dst: fsmReady},
}

// fsmState is the FSM state name for a valid status.
func fsmState(s Status) string {
	if s.State != Paused {
		return string(s.State)
	}
	switch s.PausedFrom {
	case Ready:
		return fsmPausedReady
	case Running:
		return fsmPausedRunning
	case Blocked:
		return fsmPausedBlocked
	}
	return fsmPaused
}

// statusOf is the status for an FSM state name.
func statusOf(name string) Status {
	switch name {
	case fsmPausedReady:
		return Status{State: Paused, PausedFrom: Ready}
	case fsmPausedRunning:
		return Status{State: Paused, PausedFrom: Running}
	case fsmPausedBlocked:
		return Status{State: Paused, PausedFrom: Blocked}
	}
	return Status{State: State(name)}
}
