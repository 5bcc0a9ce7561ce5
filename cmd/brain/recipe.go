package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/engine-brain/brain/recipes"
)

const recipeUsage = `Usage:
  brain recipe lint FILE...   check recipe files, each with the recipes it extends;
                              print every problem as file:line:col: field: message
  brain recipe schema         print the recipe JSON Schema (recipes/recipe.schema.json)
  brain recipe show RECIPE [--recipes DIR]
                              print RECIPE (a built-in name, a name in DIR, or a .yaml
                              file) as it resolves: extends merged, the system prompt
                              exactly as the model gets it (the recipe's, then its
                              engine's contract text), the validation that runs
  brain recipe test RECIPE SCRIPT [--view author|user|raw] [--golden FILE [--update]]
                              play SCRIPT (user messages and scripted model answers)
                              against RECIPE (a built-in name or a .yaml file) offline;
                              print the user view, the state changes, the tool errors
                              and the system notices (--view user: only what the user
                              sees; --view raw: every event), or compare them with FILE
  brain recipe help           print this help

lint exits 0 when every file is clean, 1 when any problem is found, 2 on misuse.
test exits 1 when the model calls a tool the recipe lacks (unknown_tool), a model
call fails (model_error) or rounds of the script are never played (unused_rounds),
unless the script lists them: expect: [unknown_tool, model_error, unused_rounds].
`

// runRecipe runs `brain recipe ARGS` and returns the exit code. Lint results
// (problems and the summary line) go to stdout, usage errors to stderr.
func runRecipe(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "brain recipe: missing subcommand")
		fmt.Fprint(stderr, recipeUsage)
		return 2
	}
	switch cmd, rest := args[0], args[1:]; cmd {
	case "lint":
		return recipeLint(rest, stdout, stderr)
	case "test":
		return recipeTest(rest, stdout, stderr)
	case "show":
		return recipeShow(rest, stdout, stderr)
	case "schema":
		if len(rest) > 0 {
			fmt.Fprintf(stderr, "brain recipe schema: unexpected argument %q\n", rest[0])
			fmt.Fprint(stderr, recipeUsage)
			return 2
		}
		if _, err := stdout.Write(recipes.Schema()); err != nil {
			fmt.Fprintf(stderr, "brain recipe schema: %v\n", err)
			return 1
		}
		return 0
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, recipeUsage)
		return 0
	default:
		fmt.Fprintf(stderr, "brain recipe: unknown subcommand %q\n", cmd)
		fmt.Fprint(stderr, recipeUsage)
		return 2
	}
}

func recipeLint(files []string, stdout, stderr io.Writer) int {
	for _, f := range files {
		switch {
		case f == "-h" || f == "-help" || f == "--help":
			fmt.Fprint(stdout, recipeUsage)
			return 0
		case strings.HasPrefix(f, "-"):
			fmt.Fprintf(stderr, "brain recipe lint: unknown flag %s (lint takes recipe files only; a file named so: ./%s)\n", f, f)
			fmt.Fprint(stderr, recipeUsage)
			return 2
		}
	}
	if len(files) == 0 {
		fmt.Fprintln(stderr, "brain recipe lint: no files to check")
		fmt.Fprint(stderr, recipeUsage)
		return 2
	}
	errs := builtinEngines.Linter().Lint(files...)
	if len(errs) == 0 {
		fmt.Fprintf(stdout, "ok: %s\n", plural(len(files), "recipe file"))
		return 0
	}
	bad := make(map[string]bool)
	for _, e := range errs {
		fmt.Fprintln(stdout, e.Error())
		bad[e.File] = true
	}
	fmt.Fprintf(stdout, "%s in %s\n", plural(len(errs), "problem"), plural(len(bad), "file"))
	return 1
}

func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
