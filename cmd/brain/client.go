package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"

	"github.com/engine-brain/brain/api"
	"github.com/engine-brain/brain/conversation"
)

// defaultURL is where the client commands look for a server without
// BRAIN_URL: where `brain serve` listens by default.
const defaultURL = "http://127.0.0.1:8080"

// clientCommand is a command that talks to a running server.
type clientCommand struct {
	usage string // the arguments, after the command's name
	help  string
	run   func(ctx context.Context, cc *clientCall, args []string) error
}

// clientCommands are the client commands by name; main's usage lists them.
var clientCommands = map[string]clientCommand{
	"ps":     {"[--state STATE] [--parent PID]", "list the processes, or the workers of one", runPS},
	"new":    {"RECIPE [INPUT]", "create a process; with INPUT it starts working on it", runNew},
	"send":   {"PID TEXT", "send a user message to a process", runSend},
	"steer":  {"PID TEXT", "send an operator message to a process", runSteer},
	"logs":   {"PID [-f [--no-progress]] [--view user|raw] [--json]", "print a process's conversation; -f follows it until Ctrl-C, with the progress of running turns", runLogs},
	"pause":  {"PID", "hold a process (operator)", control("pause")},
	"resume": {"PID", "release a held process", control("resume")},
	"stop":   {"PID", "finish a process for good", control("stop")},
	"retry":  {"PID", "run a FAILED process again", control("retry")},
	"rm":     {"PID...", "delete processes, their conversations and their workers (not while a turn runs)", runRm},
	"inbox":  {"PID", "list the messages waiting in a process's inbox, oldest first (operator)", runInbox},
	"timers": {"PID [--in DURATION | --at TIME | --cron EXPR TEXT] [--cancel ID]",
		"list a process's timers; --in, --at or --cron arms one that posts TEXT, --cancel cancels one (operator)", runTimers},
	"approvals": {"", "list the tool calls waiting for your decision (an operator sees every one, a user those of her processes she may decide)", runApprovals},
	"approve":   {"PID CALL [--reason TEXT]", "let a tool call that waits for approval run", decide(conversation.Approve)},
	"reject":    {"PID CALL --reason TEXT", "refuse a tool call that waits for approval; the model reads the reason as its result", decide(conversation.Reject)},
}

// clientCall is one run of a client command: the client and where its
// output goes.
type clientCall struct {
	name   string // "brain send", for messages
	cmd    clientCommand
	url    string
	token  bool // whether BRAIN_TOKEN is set, for hints
	client *api.Client
	stdout io.Writer
	stderr io.Writer
}

// usageError is a misuse of a command: exit code 2 with its usage.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// runClient runs client command name against BRAIN_URL with BRAIN_TOKEN
// (read with getenv) and returns the exit code: 1 when the server or the
// network fails, 2 when the command is misused.
func runClient(ctx context.Context, name string, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	cmd := clientCommands[name]
	url := strings.TrimRight(getenv("BRAIN_URL"), "/")
	if url == "" {
		url = defaultURL
	}
	token := getenv("BRAIN_TOKEN")
	cc := &clientCall{
		name: "brain " + name, cmd: cmd, url: url, token: token != "",
		client: api.NewClient(url, token), stdout: stdout, stderr: stderr,
	}
	err := cmd.run(ctx, cc, args)
	var ue usageError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "%s: %s\nusage: %s %s\n", cc.name, ue.msg, cc.name, cmd.usage)
		return 2
	default:
		fmt.Fprintf(stderr, "%s: %s\n", cc.name, cc.describe(err))
		return 1
	}
}

// describe makes one line of an error: the server's status, code and
// message, or why the server could not be reached.
func (cc *clientCall) describe(err error) string {
	var apiErr *api.Error
	if errors.As(err, &apiErr) {
		msg := fmt.Sprintf("%d %s: %s", apiErr.Status, apiErr.Code, apiErr.Message)
		if apiErr.Status == http.StatusUnauthorized && !cc.token {
			msg += " (set BRAIN_TOKEN to your API token)"
		}
		return oneLine(msg)
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) {
		return oneLine(fmt.Sprintf("cannot reach brain at %s: %v (is `brain serve` running there? BRAIN_URL sets the address)", cc.url, opErr))
	}
	return oneLine(err.Error())
}

// oneLine folds a message onto one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// flags returns a flag set for the command; parse parses it.
func (cc *clientCall) flags() *flag.FlagSet {
	fs := flag.NewFlagSet(cc.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported by runClient, help by parse
	fs.Usage = func() {}
	return fs
}

// parse parses the command's flags, which may come before, between or
// after its arguments (`brain logs PID -f`), and returns the arguments.
// Everything after -- is an argument. --help prints the usage on stdout.
func (cc *clientCall) parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				cc.printHelp(fs)
				return nil, err
			}
			return nil, usageError{err.Error()}
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			return append(positional, rest...), nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

// printHelp prints the command's usage and flags on stdout.
func (cc *clientCall) printHelp(fs *flag.FlagSet) {
	fmt.Fprintf(cc.stdout, "Usage:\n  %s %s\n\n%s.\nBRAIN_URL (default %s) and BRAIN_TOKEN name the server and your API token.\n",
		cc.name, cc.cmd.usage, cc.cmd.help, defaultURL)
	fs.SetOutput(cc.stdout)
	fs.PrintDefaults()
}
