// Command brain runs LLM agent engine processes and is their command-line
// client. main only wires: flags, the logger and the subcommands.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/engine-brain/brain/recipes"
)

const usage = `brain runs LLM agent engine processes and owns their lifecycle.

Usage:
  brain [--log-level LEVEL] [--log-format json|console] COMMAND [ARGS]

The log flags, or BRAIN_LOG_LEVEL and BRAIN_LOG_FORMAT, set the log of every
command; brain serve also takes them after serve and from its config file.

Commands:
  serve                 run a brain node with its HTTP API (brain serve --help)
  demo                  play a delegation scenario offline: arthur hands a task to a
                        worker, goes READY, and wakes by itself when the result arrives
  recipe lint FILE...   check recipe files and print every error
  recipe schema         print the recipe JSON Schema
  recipe show NAME      print a recipe as it resolves, its system prompt as the model gets it
  recipe test RECIPE SCRIPT [--view author|user|raw] [--golden FILE [--update]]
                        play a script of user messages and model answers against a
                        recipe offline; fails on an unknown tool, a model error or
                        unplayed rounds the script does not expect (brain recipe help)
  bench                 measure a node: turns/s, Redis cost per turn, wake latency,
                        memory, what an idle process costs (brain bench --help)
  migrate --redis URL   move the data of a brain from before partitions into the
                        layout this one reads, with every node stopped
  token new|hash        make an API token, or hash one (stdin) for brain.yaml
  version               print the version

Client commands, against BRAIN_URL (default http://127.0.0.1:8080) with BRAIN_TOKEN:
  ps [--state STATE] [--recipe NAME] [--parent PID]
                        list the processes
  new RECIPE [INPUT]    create a process (brain new default hello)
  send PID TEXT         send a user message
  steer PID TEXT        send an operator message
  logs PID [-f [--no-progress]] [--view user|raw] [--json]
                        print a conversation; -f follows it until Ctrl-C,
                        with the progress of running turns
  pause|resume|stop|retry PID
                        hold, release, finish or retry a process
  rm PID...             delete processes and their conversations
  inbox PID             list the messages waiting in a process's inbox
  timers PID [--in D | --at TIME | --cron EXPR TEXT] [--cancel ID]
                        list a process's timers, arm one or cancel one
  approvals             list the tool calls waiting for your decision
  approve PID CALL [--reason TEXT]
                        let a tool call that waits for approval run
  reject PID CALL --reason TEXT
                        refuse it; the model reads the reason

Global flags:
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is main without the process: it returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("brain", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var logFlags []flagValue
	for _, s := range logSettings {
		fs.Func(s.name, s.usage, func(v string) error {
			if err := s.set(&serveConfig{}, v); err != nil {
				return err
			}
			logFlags = append(logFlags, flagValue{s, v})
			return nil
		})
	}
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "brain: missing command")
		fs.Usage()
		return 2
	}
	cmd, rest := fs.Arg(0), fs.Args()[1:]
	if cmd == "serve" {
		// Its config file may set the log too: it builds its own logger,
		// with the log flags before the command taken as its own.
		var serveArgs []string
		for _, f := range logFlags {
			serveArgs = append(serveArgs, "--"+f.s.name, f.v)
		}
		return runServe(ctx, append(serveArgs, rest...), stdout, stderr)
	}
	logOpts, err := commandLog(logFlags, os.LookupEnv)
	if err != nil {
		fmt.Fprintf(stderr, "brain: %v\n", err)
		return 2
	}
	log := newLogger(logOpts, stderr)
	defer func() { _ = log.Sync() }()

	switch cmd {
	case "version":
		fmt.Fprintln(stdout, versionString())
		return 0
	case "recipe":
		return runRecipe(rest, stdout, stderr)
	case "demo":
		return runDemo(ctx, log, stdout, stderr)
	case "token":
		return runToken(rest, os.Stdin, stdout, stderr)
	case "ps", "new", "send", "steer", "logs", "pause", "resume", "stop", "retry", "rm", "inbox", "timers", "approvals", "approve", "reject":
		return runClient(ctx, cmd, rest, os.Getenv, stdout, stderr)
	case "bench":
		return runBench(ctx, rest, log, stdout, stderr)
	case "migrate":
		return runMigrate(ctx, rest, log, stdout, stderr)
	case "help":
		fs.SetOutput(stdout)
		fmt.Fprint(stdout, usage)
		fs.PrintDefaults()
		return 0
	default:
		hint := ""
		if c := recipes.Closest(cmd, commands); c != "" {
			hint = fmt.Sprintf("; did you mean `brain %s`?", c)
		}
		fmt.Fprintf(stderr, "brain: unknown command %q%s; run `brain help` for the list\n", cmd, hint)
		return 2
	}
}

// commands are brain's commands, for the suggestion after a mistyped one.
var commands = []string{"serve", "demo", "recipe", "bench", "migrate", "token", "version", "help",
	"ps", "new", "send", "steer", "logs", "pause", "resume", "stop", "retry", "rm", "inbox", "timers",
	"approvals", "approve", "reject"}
