package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/engine-brain/brain/engines"
	"github.com/engine-brain/brain/recipes"
)

// recipeShow runs `brain recipe show NAME [--recipes DIR]`: it prints the
// recipe as it resolves, as YAML, with the system prompt exactly as the
// model gets it (the recipe's, then its engine's contract text) and the
// validation in effect.
func recipeShow(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("brain recipe show", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("recipes", "", "`DIR` of recipe files, which replace built-in recipes of the same name")
	fs.Usage = func() { fmt.Fprint(stderr, recipeUsage) }
	pos, err := interleaved(fs, args) // the flag may come before or after the name
	if err != nil {
		return 2
	}
	if len(pos) != 1 {
		fmt.Fprintln(stderr, "brain recipe show: want one recipe: a built-in name, a name in --recipes DIR, or a .yaml file")
		fmt.Fprint(stderr, recipeUsage)
		return 2
	}
	r, err := showable(pos[0], *dir)
	if err != nil {
		fmt.Fprintf(stderr, "brain recipe show: %v\n", err)
		return 1
	}
	out, err := showRecipe(builtinEngines, r)
	if err != nil {
		fmt.Fprintf(stderr, "brain recipe show: %v\n", err)
		return 1
	}
	_, _ = stdout.Write(out)
	return 0
}

// showable loads the recipe arg names: from dir when given, else a
// built-in name or a recipe file (as recipe test takes it).
func showable(arg, dir string) (*recipes.Recipe, error) {
	if dir == "" {
		return loadRecipe(arg)
	}
	lib, err := recipes.LoadDir(dir)
	if err != nil {
		return nil, err
	}
	return lib.Get(arg)
}

// showRecipe writes r as it resolves, as YAML: its system_prompt is the
// one the model gets (engines.System: contract is folded into it), and
// validation.enabled says whether the validators run.
func showRecipe(reg *engines.Registry, r *recipes.Recipe) ([]byte, error) {
	system, err := reg.System(r)
	if err != nil {
		return nil, err
	}
	shown := r.Clone()
	shown.SystemPrompt = system
	shown.Contract = recipes.Contract{}
	on := r.ValidationOn()
	shown.Validation.Enabled = &on
	from := ""
	if r.Extends != "" {
		from = ", extends " + r.Extends + " resolved"
		shown.Extends = ""
	}
	// Through JSON, whose encoders write durations and tool references
	// in their recipe form, to YAML in block style.
	data, err := json.Marshal(shown)
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	blockStyle(&doc)
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "# %s as it resolves%s: system_prompt is what the model gets (the recipe's, then the %s engine's contract), validation what runs.\n",
		r.Name, from, r.EngineKind())
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// blockStyle drops the flow style and quotes JSON gave n, and writes
// multi-line strings as literal blocks.
func blockStyle(n *yaml.Node) {
	n.Style = 0
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" && strings.Contains(n.Value, "\n") {
		n.Style = yaml.LiteralStyle
	}
	for _, c := range n.Content {
		blockStyle(c)
	}
}
