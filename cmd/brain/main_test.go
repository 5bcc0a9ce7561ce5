package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
)

func TestRun(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		args       []string
		code       int
		wantOut    string
		wantErrOut string
	}{
		{"version", []string{"version"}, 0, "brain ", ""},
		{"help", []string{"help"}, 0, "recipe lint FILE...", ""},
		{"no command", nil, 2, "", "missing command"},
		{"unknown command", []string{"frobnicate"}, 2, "", `unknown command "frobnicate"`},
		{"bad log level", []string{"--log-level", "loud", "version"}, 2, "", `invalid value "loud" for flag -log-level: want debug, info, warn or error`},
		{"bad log format", []string{"--log-format", "xml", "version"}, 2, "", `invalid value "xml" for flag -log-format: want json or console`},
		{"bad log level after serve", []string{"serve", "--log-level", "loud"}, 2, "", `invalid value "loud" for flag -log-level`},
		{"log flags before serve are its own", []string{"--log-format", "json", "serve", "--help"}, 0, "", "-log-format FORMAT"},
		{"unknown flag", []string{"--colour", "version"}, 2, "", "flag provided but not defined"},
		{"serve unknown flag", []string{"serve", "--colour"}, 2, "", "flag provided but not defined"},
		{"serve help", []string{"serve", "--help"}, 0, "", "--insecure-open"},
		{"token misuse", []string{"token"}, 2, "", "brain token new"},
		{"client misuse", []string{"send", "p_1"}, 2, "", "brain send: missing TEXT"},
		{"client help", []string{"logs", "--help"}, 0, "follow", ""},
		{"help lists the approval commands", []string{"help"}, 0, "  approvals  ", ""},
		{"reject without a reason", []string{"reject", "p_1", "c_1"}, 2, "", "brain reject: missing --reason"},
		{"help lists recipe test", []string{"help"}, 0, "  recipe test RECIPE SCRIPT", ""},
		{"a mistyped command gets a suggestion", []string{"sned", "p_1", "hi"}, 2, "", "unknown command \"sned\"; did you mean `brain send`?"},
		{"no suggestion for a word far from all", []string{"frobnicate"}, 2, "", "\"frobnicate\"; run `brain help`"},
		{"recipe lint --help", []string{"recipe", "lint", "--help"}, 0, "brain recipe lint FILE...", ""},
		{"recipe lint unknown flag", []string{"recipe", "lint", "--strict", "a.yaml"}, 2, "", "brain recipe lint: unknown flag --strict"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), tt.args, &stdout, &stderr)
			if code != tt.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tt.code, stderr.String())
			}
			if !strings.Contains(stdout.String(), tt.wantOut) {
				t.Errorf("stdout %q lacks %q", stdout.String(), tt.wantOut)
			}
			if !strings.Contains(stderr.String(), tt.wantErrOut) {
				t.Errorf("stderr %q lacks %q", stderr.String(), tt.wantErrOut)
			}
		})
	}
}

func TestDemo(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"--log-level", "warn", "demo"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", code, stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{
		"marvin-worker",
		"now DONE",
		"[state] RUNNING -> READY (continue by engine)",
		"The worker is back.",
		"[state] RUNNING -> BLOCKED (await_user by engine)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
}

// brain demo prints its scenario in one order in every run, though the
// worker's commit and arthur's may reach OnCommit in either order: arthur
// delegates, the worker finishes, its result reaches arthur's inbox, arthur
// answers.
func TestDemoPrintsOneOrder(t *testing.T) {
	t.Parallel()
	ids := regexp.MustCompile(`\b[pt]_[0-9A-Za-z]+`)
	steps := []string{
		"== arthur (ID) turn committed: now READY",
		"assistant: A worker is collecting the data",
		"== marvin-worker (ID) turn committed: now DONE",
		"[inbox system from arthur (ID)] Compare the release years",
		"[finish_task done] Go 2009",
		"== arthur (ID) turn committed: now BLOCKED",
		"[inbox process_event from marvin-worker (ID)]",
		"assistant: The worker is back.",
		"== the user view of arthur (ID)",
	}
	var first string
	for run := range 20 {
		var out bytes.Buffer
		if err := demo(context.Background(), zap.NewNop(), &out); err != nil {
			t.Fatal(err)
		}
		got := ids.ReplaceAllString(out.String(), "ID")
		at := 0
		for _, s := range steps {
			i := strings.Index(got[at:], s)
			if i < 0 {
				t.Fatalf("run %d: %q is missing or out of order:\n%s", run, s, got)
			}
			at += i + len(s)
		}
		if run == 0 {
			first = got
		} else if got != first {
			t.Fatalf("run %d printed another scenario than run 0:\n%s", run, cmp.Diff(first, got))
		}
	}
}
