package main

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/store"
	"github.com/engine-brain/brain/tools"
)

// demoTurn is one committed turn of `brain demo`.
type demoTurn struct {
	rec    store.Record
	events []conversation.Event
	start  time.Time // its turn_start's time
}

// demoTurns are the turns `brain demo` committed. OnCommit calls come from
// the goroutines of the turns and may arrive out of order (the worker's
// commit before the turn of arthur's that spawned it); the order the turns
// started in is the scenario's: arthur's first turn starts before the
// worker exists, and the worker's result wakes arthur's second turn.
type demoTurns []demoTurn

func (ts *demoTurns) add(rec store.Record, events []conversation.Event) {
	t := demoTurn{rec: rec, events: events}
	for _, e := range events {
		if e.TurnStart != nil {
			t.start = e.At
			break
		}
	}
	*ts = append(*ts, t)
}

// write prints the turns in the order they started, a parent's first on a
// tie, each with the messages from other processes that reached its inbox
// (the worker's task, its result) and the result a worker finished with.
func (ts demoTurns) write(w io.Writer) {
	sorted := slices.Clone(ts)
	slices.SortStableFunc(sorted, func(a, b demoTurn) int {
		return cmp.Or(a.start.Compare(b.start), cmp.Compare(a.rec.Parent, b.rec.Parent))
	})
	names := map[string]string{}
	for _, t := range sorted {
		names[t.rec.ID] = t.rec.Recipe
	}
	for _, t := range sorted {
		fmt.Fprintf(w, "\n== %s (%s) turn committed: now %s\n", t.rec.Recipe, t.rec.ID, t.rec.Status)
		for i := range t.events {
			e := &t.events[i]
			switch {
			case e.InboxMessage != nil && e.InboxMessage.Kind != conversation.KindUser:
				m := e.InboxMessage
				from := m.From
				if pid := strings.TrimPrefix(from, "process:"); names[pid] != "" {
					from = names[pid] + " (" + pid + ")"
				}
				fmt.Fprintf(w, "[inbox %s from %s] %s\n", m.Kind, from, clip(m.Content))
			case e.ToolCallRequest != nil && e.ToolCallRequest.Name == tools.FinishTask:
				if args, err := tools.ParseFinish(e.ToolCallRequest.Arguments); err == nil {
					fmt.Fprintf(w, "[finish_task %s] %s\n", args.Status, clip(args.Result))
				}
			default:
				writeTranscript(w, t.events[i:i+1])
			}
		}
	}
}
