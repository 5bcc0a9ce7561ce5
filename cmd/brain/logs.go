package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/engine-brain/brain/api"
	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/live"
)

// logsPage is how many events `brain logs` asks for at a time.
const logsPage = 500

// runLogs prints a process's log: the user view as a transcript, or with
// --view raw every event on one line (with --json, each event as the API
// gives it). With -f it then follows the log until ctx ends (Ctrl-C),
// which is a normal exit, showing the progress of running turns between
// the events (not with --json or --no-progress; see progressView).
func runLogs(ctx context.Context, cc *clientCall, args []string) error {
	err := logs(ctx, cc, args)
	if ctx.Err() != nil {
		return nil // interrupted: the way -f ends, even mid-page
	}
	return err
}

func logs(ctx context.Context, cc *clientCall, args []string) error {
	fs := cc.flags()
	follow := fs.Bool("f", false, "follow: print new events as they come, until Ctrl-C")
	view := fs.String("view", "user", "`VIEW` of the log: user (what a person sees) or raw (every event; operators)")
	asJSON := fs.Bool("json", false, "print each event as one line of JSON, as the API gives it (to keep a log, say); no progress")
	noProgress := fs.Bool("no-progress", false, "with -f, do not show the progress of running turns (the round, the tool that runs, the answer as it is written)")
	rest, err := cc.parse(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(rest) == 0:
		return usagef("missing PID")
	case len(rest) > 1:
		return usagef("unexpected argument %q", rest[1])
	case *view != "user" && *view != "raw":
		return usagef("--view %q: want user or raw", *view)
	}
	pid := rest[0]
	enc := json.NewEncoder(cc.stdout)
	show := func(events []conversation.Event) {
		if *asJSON {
			for i := range events {
				_ = enc.Encode(&events[i])
			}
			return
		}
		if *view == "raw" {
			for i := range events {
				fmt.Fprintln(cc.stdout, rawLine(&events[i]))
			}
			return
		}
		writeTranscript(cc.stdout, events)
	}

	p, err := cc.client.GetProcess(ctx, pid)
	if err != nil {
		return err
	}
	if p.EventsTrimmed > 0 && !*asJSON {
		fmt.Fprintf(cc.stdout, "[trimmed] the oldest %d events were deleted (limits.max_log_events)\n", p.EventsTrimmed)
	}
	// Pages end where the log ends: Next stops moving. In the user view a
	// page may show nothing while Next moves over events the view omits.
	after := ""
	for {
		page, err := cc.client.Events(ctx, pid, *view, after, logsPage)
		if err != nil {
			return err
		}
		show(page.Events)
		if page.Next == "" || page.Next == after {
			break
		}
		after = page.Next
	}
	// The user view has no state changes: say where the process stands,
	// and, when following, whenever that changes.
	state := ""
	showState := func() error {
		if *view == "raw" || *asJSON {
			return nil
		}
		p, err := cc.client.GetProcess(ctx, pid)
		if err != nil {
			return err
		}
		if p.State != state {
			state = p.State
			fmt.Fprintf(cc.stdout, "[state] %s\n", state)
		}
		return nil
	}
	if err := showState(); err != nil {
		return err
	}
	if !*follow {
		return nil
	}
	// Stream goes on after the last event the pages covered, and reconnects
	// by itself when the connection drops (a restart of the server).
	var (
		progress *progressView
		opts     []api.StreamOption
	)
	if !*asJSON && !*noProgress {
		progress = newProgressView(cc.stdout, isTerminal(cc.stdout))
		opts = append(opts, api.WithProgress(func(u live.Update) error {
			progress.update(u)
			return nil
		}))
	}
	defer progress.hide()
	return cc.client.Stream(ctx, pid, *view, after, func(e conversation.Event) (err error) {
		progress.landed(&e, func() string {
			show([]conversation.Event{e})
			err = showState()
			return state
		})
		return err
	}, opts...)
}

// rawLine is an event on one line: `type by: summary`.
func rawLine(e *conversation.Event) string {
	head := string(e.Type)
	if e.By != "" {
		head += " " + e.By
	}
	if s := summary(e); s != "" {
		return head + ": " + s
	}
	return head
}

// summaryMax bounds the text of a raw line.
const summaryMax = 160

// summary describes an event's payload in a few words.
func summary(e *conversation.Event) string {
	switch {
	case e.TurnStart != nil:
		return e.TurnStart.Reason
	case e.InboxMessage != nil:
		m := e.InboxMessage
		kind := string(m.Kind)
		if m.From != "" && m.From != e.By {
			kind += " from " + m.From
		}
		return "[" + kind + "] " + clip(m.Content)
	case e.ChatResponse != nil:
		c := e.ChatResponse
		text := c.Text
		if len(c.Structured) > 0 {
			text = string(c.Structured)
		}
		return string(c.Variant) + ": " + clip(text)
	case e.ToolCallRequest != nil:
		return e.ToolCallRequest.Name + " " + clip(string(e.ToolCallRequest.Arguments))
	case e.ToolCallResponse != nil:
		r := e.ToolCallResponse
		s := r.Name
		if r.IsError {
			s += " (error)"
		}
		return s + ": " + clip(conversation.TextOf(r.Content))
	case e.ValidationCorrection != nil:
		v := e.ValidationCorrection
		return fmt.Sprintf("%s #%d: %s", v.Validator, v.Attempt, clip(v.Text))
	case e.StateChange != nil:
		c := e.StateChange
		return fmt.Sprintf("%s -> %s (%s)", c.From, c.To, c.Event)
	case e.ApprovalRequested != nil:
		calls := make([]string, len(e.ApprovalRequested.Calls))
		for i, c := range e.ApprovalRequested.Calls {
			calls[i] = fmt.Sprintf("%s %s (by %s)", c.CallID, c.Name, c.By)
		}
		return strings.Join(calls, ", ")
	case e.ApprovalDecided != nil:
		d := e.ApprovalDecided
		return strings.TrimSuffix(fmt.Sprintf("%s %s: %s", d.CallID, d.Decision, clip(d.Reason)), ": ")
	case e.SystemNotice != nil:
		return e.SystemNotice.Code + ": " + clip(e.SystemNotice.Text)
	case e.HostedActivity != nil:
		h := e.HostedActivity
		return strings.TrimSpace(fmt.Sprintf("%s %s %s", h.Name, h.State, clip(cmp.Or(h.Summary, string(h.Input)))))
	case e.Presentation != nil:
		return clip(e.Presentation.Summary)
	case e.ModelUsage != nil:
		u := e.ModelUsage
		s := fmt.Sprintf("%d tokens in, %d out", u.InputTokens, u.OutputTokens)
		if who := strings.Trim(u.Provider+"/"+u.Model, "/"); who != "" {
			s = who + ": " + s
		}
		if u.DroppedMessages > 0 || u.ClearedResults > 0 {
			s += fmt.Sprintf("; conversation cut to fit: %d earlier messages left out, %d tool results cleared",
				u.DroppedMessages, u.ClearedResults)
		}
		return s
	}
	return ""
}

// clip folds text onto one line and shortens it to summaryMax runes.
func clip(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > summaryMax {
		return string(r[:summaryMax-1]) + "…"
	}
	return s
}
