package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/engine-brain/brain"
	"github.com/engine-brain/brain/engines"
	"github.com/engine-brain/brain/llm/scripted"
	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/tools/mcp"
	"github.com/engine-brain/brain/tools/toolset"
)

// playScript is the file `brain recipe test` plays: the user's messages,
// one per turn, and the scripted model's answers.
type playScript struct {
	Messages        []string `yaml:"messages"`
	scripted.Script `yaml:",inline"`
	// Expect lists what the play may do that otherwise fails the test:
	// unknown_tool, model_error, unused_rounds (see recipe_expect.go).
	Expect []string `yaml:"expect,omitempty"`
}

// Views of `brain recipe test`.
const (
	viewAuthor = "author" // the user view, state changes, tool errors, notices
	viewUser   = "user"   // the user view and state changes
	viewRaw    = "raw"    // every event
)

// interleaved parses args with fs, flags and positional arguments in any
// order (the flag package stops at the first of the latter), and returns
// the positional ones.
func interleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// recipeTest runs `brain recipe test RECIPE SCRIPT [--golden FILE [--update]]`.
func recipeTest(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("brain recipe test", flag.ContinueOnError)
	fs.SetOutput(stderr)
	golden := fs.String("golden", "", "compare the transcript with this file instead of printing it")
	update := fs.Bool("update", false, "with --golden: write the transcript to the file")
	view := fs.String("view", viewAuthor, "`VIEW` of the play: author (the user view, state changes, tool errors and notices), user or raw (every event)")
	fs.Usage = func() { fmt.Fprint(stderr, recipeUsage) }
	pos, err := interleaved(fs, args) // flags may come before, between or after the two arguments
	if err != nil {
		return 2
	}
	if len(pos) != 2 {
		fmt.Fprintln(stderr, "brain recipe test: want a recipe (a built-in name or a .yaml file) and a script file")
		fmt.Fprint(stderr, recipeUsage)
		return 2
	}
	if *update && *golden == "" {
		fmt.Fprintln(stderr, "brain recipe test: --update needs --golden FILE")
		return 2
	}
	if *view != viewAuthor && *view != viewUser && *view != viewRaw {
		fmt.Fprintf(stderr, "brain recipe test: --view %q: want author, user or raw\n", *view)
		return 2
	}
	play, err := playRecipe(context.Background(), pos[0], pos[1], *view)
	if err != nil {
		fmt.Fprintf(stderr, "brain recipe test: %v\n", err)
		return 1
	}
	transcript := play.transcript
	if bad, missing := unexpected(play.problems, play.expect); len(bad) > 0 || len(missing) > 0 {
		if *golden == "" {
			_, _ = stdout.Write(transcript)
		}
		reportProblems(stderr, pos[1], bad, missing)
		return 1
	}
	switch {
	case *golden == "":
		_, _ = stdout.Write(transcript)
	case *update:
		if err := os.WriteFile(*golden, transcript, 0o644); err != nil {
			fmt.Fprintf(stderr, "brain recipe test: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "wrote %s\n", *golden)
	default:
		want, err := os.ReadFile(*golden)
		if err != nil {
			fmt.Fprintf(stderr, "brain recipe test: %v (create it with --update)\n", err)
			return 1
		}
		if !bytes.Equal(want, transcript) {
			fmt.Fprintf(stdout, "transcript differs from %s; got:\n%s", *golden, transcript)
			return 1
		}
		fmt.Fprintf(stdout, "ok: transcript matches %s\n", *golden)
	}
	return 0
}

// reportProblems says what went wrong in a play and how to accept it.
func reportProblems(w io.Writer, script string, bad []playProblem, missing []string) {
	if len(bad) > 0 {
		fmt.Fprintln(w, "brain recipe test: the play went wrong:")
		var kinds []string
		for _, p := range bad {
			fmt.Fprintf(w, "  %s: %s\n", p.kind, p.text)
			if !slices.Contains(kinds, p.kind) {
				kinds = append(kinds, p.kind)
			}
		}
		fmt.Fprintf(w, "if the script plays this on purpose, add `expect: [%s]` to %s\n", strings.Join(kinds, ", "), script)
	}
	for _, m := range missing {
		fmt.Fprintf(w, "brain recipe test: %s expects %s, but the play had none; remove it from expect\n", script, m)
	}
}

// playResult is what playRecipe returns.
type playResult struct {
	transcript []byte
	problems   []playProblem
	expect     []string
}

// playRecipe plays a script against a recipe offline and returns the
// transcript in the view asked for, what went wrong and what the script
// expects to go wrong.
func playRecipe(ctx context.Context, recipeArg, scriptPath, view string) (*playResult, error) {
	r, err := loadRecipe(recipeArg)
	if err != nil {
		return nil, err
	}
	script, err := loadPlayScript(scriptPath)
	if err != nil {
		return nil, err
	}
	builder := toolset.Builder{Catalog: toolset.Builtins()}
	if len(r.MCPServers) > 0 {
		// The script's calls of MCP tools reach the recipe's servers.
		pool, err := mcp.NewPool(mcp.Config{})
		if err != nil {
			return nil, err
		}
		defer pool.Close()
		builder.MCP = pool
	}
	reg, _, err := builder.Build(ctx, r)
	if err != nil {
		return nil, fmt.Errorf("recipe %s: %w", r.Name, err)
	}
	// A stepping clock keeps the transcript reproducible.
	clock := engines.StepClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	kinds := brain.DefaultEngines(clock)
	kind, err := kinds.Of(r)
	if err != nil {
		return nil, err
	}
	model := scripted.New(&script.Script)
	sess := engines.NewSession(kind.Engine, engines.Turn{
		Recipe: r,
		Model:  model,
		Tools:  reg,
	}, clock)
	for _, m := range script.Messages {
		if _, err := sess.Say(ctx, "user", m); err != nil {
			return nil, err
		}
	}
	var buf bytes.Buffer
	switch view {
	case viewUser:
		writeTranscript(&buf, sess.Log)
	case viewRaw:
		writeRawTranscript(&buf, sess.Log)
	default:
		writeAuthorTranscript(&buf, sess.Log)
	}
	fmt.Fprintf(&buf, "final state: %s\n", sess.Status)
	return &playResult{
		transcript: buf.Bytes(),
		problems:   playProblems(sess.Log, reg, kinds.Terms(r).Ending, model.Unplayed()),
		expect:     script.Expect,
	}, nil
}

// loadRecipe takes a built-in recipe's name or a recipe file's path.
func loadRecipe(arg string) (*recipes.Recipe, error) {
	if !strings.HasSuffix(arg, ".yaml") && !strings.ContainsRune(arg, filepath.Separator) {
		return recipes.Builtin().Get(arg)
	}
	data, err := os.ReadFile(arg)
	if err != nil {
		return nil, err
	}
	return recipes.Parse(arg, data)
}

func loadPlayScript(path string) (*playScript, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var s playScript
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(s.Messages) == 0 {
		return nil, fmt.Errorf("%s: no messages: add `messages: [\"first user message\", ...]`", path)
	}
	if err := s.Script.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := validateExpect(s.Expect); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &s, nil
}
