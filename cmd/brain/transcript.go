package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/engines/vogon"
	"github.com/engine-brain/brain/engines/zaphod"
	"github.com/engine-brain/brain/tools"
)

// writeTranscript prints what a person sees of a log — the user view — with
// the state changes between, one line or indented block per event.
func writeTranscript(w io.Writer, log []conversation.Event) {
	for _, e := range log {
		if c := e.StateChange; c != nil {
			fmt.Fprintf(w, "[state] %s -> %s (%s by %s)\n", c.From, c.To, c.Event, e.By)
			continue
		}
		if r := e.ToolCallResponse; r != nil && r.Name == vogon.PhaseDone && r.IsError { // a gate's refusal, for the recipe's author
			fmt.Fprintf(w, "[gate] %s\n", clip(conversation.TextOf(r.Content)))
			continue
		}
		if head, ok := strings.CutPrefix(e.By, zaphod.ByHead); ok { // a zaphod head's answer, for the engine alone
			writeHead(w, head, &e)
			continue
		}
		for _, v := range conversation.UserView([]conversation.Event{e}) {
			writeUserEvent(w, &v)
		}
	}
}

// writeAuthorTranscript prints what a recipe's author needs to see of a
// log: the user view and the state changes, as writeTranscript does, plus
// the tool calls that failed and the system notices in full.
func writeAuthorTranscript(w io.Writer, log []conversation.Event) {
	for i := range log {
		e := &log[i]
		switch {
		case e.StateChange != nil:
			fmt.Fprintf(w, "[state] %s -> %s (%s by %s)\n", e.StateChange.From, e.StateChange.To, e.StateChange.Event, e.By)
		case strings.HasPrefix(e.By, zaphod.ByHead): // a zaphod head's answer, or its failure
			writeHead(w, strings.TrimPrefix(e.By, zaphod.ByHead), e)
		case e.SystemNotice != nil:
			fmt.Fprintf(w, "[notice %s] %s\n", e.SystemNotice.Code, clip(e.SystemNotice.Text))
		case e.ToolCallResponse != nil && e.ToolCallResponse.IsError:
			fmt.Fprintf(w, "[tool error] %s: %s\n", e.ToolCallResponse.Name, clip(conversation.TextOf(e.ToolCallResponse.Content)))
		default:
			for _, v := range conversation.UserView([]conversation.Event{*e}) {
				writeUserEvent(w, &v)
			}
		}
	}
}

// writeRawTranscript prints every event of a log, one line each, as
// `brain logs --view raw` does.
func writeRawTranscript(w io.Writer, log []conversation.Event) {
	for i := range log {
		fmt.Fprintln(w, rawLine(&log[i]))
	}
}

// writeHead prints what head answered, or that it failed: the user sees
// only the synthesis, the recipe's author sees each head.
func writeHead(w io.Writer, head string, e *conversation.Event) {
	switch {
	case e.ChatResponse != nil:
		writeSpeech(w, "[head "+head+"]", e.ChatResponse.Text)
	case e.SystemNotice != nil:
		writeSpeech(w, "[head "+head+" failed]", e.SystemNotice.Text)
	}
}

func writeUserEvent(w io.Writer, e *conversation.Event) {
	switch {
	case e.TurnStart != nil:
		fmt.Fprintf(w, "--- turn %s\n", e.Turn)
	case e.InboxMessage != nil:
		writeSpeech(w, "user", e.InboxMessage.Content)
	case e.ChatResponse != nil:
		text := e.ChatResponse.Text
		if len(e.ChatResponse.Structured) > 0 {
			text = string(e.ChatResponse.Structured)
		}
		writeSpeech(w, "assistant", text)
		writeSources(w, e.ChatResponse.Citations)
	case e.ToolCallResponse != nil:
		who := "assistant"
		if name := e.ToolCallResponse.Name; name != tools.Respond && name != tools.TellUser {
			who = "tool " + e.ToolCallResponse.Name
		}
		writeSpeech(w, who, conversation.TextOf(e.ToolCallResponse.Content))
		writeSources(w, e.ToolCallResponse.Citations)
	case e.Presentation != nil:
		writePresentation(w, e.Presentation)
	case e.SystemNotice != nil: // the user view's short text
		fmt.Fprintf(w, "[notice] %s\n", e.SystemNotice.Text)
	case e.PhaseChange != nil:
		writePhaseChange(w, e.PhaseChange)
	case e.ApprovalRequested != nil: // the user view keeps the calls the user decides
		for _, c := range e.ApprovalRequested.Calls {
			fmt.Fprintf(w, "[approval] %s %s waits for your decision (call %s)\n", c.Name, clip(string(c.Arguments)), c.CallID)
		}
	}
}

// writePhaseChange prints a vogon process's move from phase to phase.
func writePhaseChange(w io.Writer, p *conversation.PhaseChange) {
	from, to := p.From, p.To
	if from == "" {
		from = "(start)"
	}
	if to == "" {
		to = "(end)"
	}
	fmt.Fprintf(w, "[phase] %s -> %s (%s)", from, to, p.Reason)
	if len(p.Result) > 0 {
		fmt.Fprintf(w, " result: %s", clip(string(p.Result)))
	}
	fmt.Fprintln(w)
}

// writeSpeech prints "who: text", indenting the lines after the first.
func writeSpeech(w io.Writer, who, text string) {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	fmt.Fprintf(w, "%s: %s\n", who, lines[0])
	for _, l := range lines[1:] {
		if l == "" {
			fmt.Fprintln(w)
			continue
		}
		fmt.Fprintf(w, "  %s\n", l)
	}
}

// writeSources lists the sources an answer cites, numbered, under it.
func writeSources(w io.Writer, citations []conversation.Citation) {
	for i, c := range citations {
		label := c.Source.URL
		if c.Source.Title != "" {
			label = c.Source.Title + " <" + c.Source.URL + ">"
		}
		if c.Incomplete {
			label += " (answer cut off)"
		}
		fmt.Fprintf(w, "  [%d] %s\n", i+1, label)
	}
}
