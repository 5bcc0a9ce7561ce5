package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/engine-brain/brain/conversation"
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
		if head, ok := strings.CutPrefix(e.By, zaphod.ByHead); ok { // a zaphod head's answer, for the engine alone
			writeHead(w, head, &e)
			continue
		}
		for _, v := range conversation.UserView([]conversation.Event{e}) {
			writeUserEvent(w, &v)
		}
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
	case e.ApprovalRequested != nil: // the user view keeps the calls the user decides
		for _, c := range e.ApprovalRequested.Calls {
			fmt.Fprintf(w, "[approval] %s %s waits for your decision (call %s)\n", c.Name, clip(string(c.Arguments)), c.CallID)
		}
	}
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
