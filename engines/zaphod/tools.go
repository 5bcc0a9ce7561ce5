package zaphod

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/engine-brain/brain/tools"
)

// NotForHeads is the note a gated tool's description gets in a head's
// pool, and, with the tool's name, the error result of a head's call of
// it: a call that waits for a person's approval ends its turn, and a head
// cannot end the turn of the panel.
const NotForHeads = "needs a person's approval, which a head of a panel cannot wait for: it is not available to heads. Answer without it."

// headTools is the pool of a head: reg's tools, those that need a
// person's approval (tools.Registry.Approval) answering every call with
// an error result that says so (NotForHeads); reg itself when none does.
func headTools(reg *tools.Registry) (*tools.Registry, error) {
	defs := reg.Definitions()
	gated := false
	for _, d := range defs {
		if _, ok := reg.Approval(d.Name); ok {
			gated = true
		}
	}
	if !gated {
		return reg, nil
	}
	ts := make([]tools.Tool, 0, len(defs))
	for _, d := range defs {
		if _, ok := reg.Approval(d.Name); ok {
			d.Description = strings.TrimSpace(d.Description + " (Heads: this tool " + NotForHeads + ")")
			ts = append(ts, refused{def: d})
			continue
		}
		ts = append(ts, reg.Offer(d))
	}
	sub, err := tools.NewRegistry(ts...)
	if err != nil {
		return nil, fmt.Errorf("the head's tools: %w", err)
	}
	return sub, nil
}

// refused is a tool that needs a person's approval, in a head's pool: it
// never runs.
type refused struct{ def tools.Definition }

func (r refused) Definition() tools.Definition { return r.def }

func (r refused) Call(context.Context, json.RawMessage) (tools.Result, error) {
	return tools.ErrorResult("`%s` %s", r.def.Name, NotForHeads), nil
}
