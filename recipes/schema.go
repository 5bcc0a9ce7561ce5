package recipes

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/invopop/jsonschema"
)

// SchemaID is the $id of the recipe JSON Schema.
const SchemaID = "https://github.com/engine-brain/brain/recipes/recipe.schema.json"

// Schema returns the JSON Schema (draft 2020-12) of a recipe file, generated
// from the Go types of this package: stable key order, two-space indent,
// trailing newline. recipes/recipe.schema.json holds the same bytes, for
// editors (`# yaml-language-server: $schema=...` at the top of a recipe).
//
// Loading validates every recipe file against this schema, so the schema is
// the one description of a recipe's shape. It leaves out what only holds
// after extends is resolved (model is required, perhaps in a parent) and
// what needs more than one field (tool names, cron expressions); loading
// checks those too.
func Schema() []byte {
	r := &jsonschema.Reflector{
		FieldNameTag:               "yaml",
		RequiredFromJSONSchemaTags: true,
		ExpandedStruct:             true,
		Anonymous:                  true,
		Namer:                      schemaName,
	}
	s := r.Reflect(&Recipe{})
	s.ID = SchemaID
	s.Title = "brain recipe"
	s.Description = "A recipe configures an engine process of brain: model, system prompt, tool pool, validation, wakeups and limits."

	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(s); err != nil {
		// The schema is built from this package's types: a failure is a
		// programming error that the package's tests catch.
		panic(fmt.Sprintf("recipes: encoding the schema: %v", err))
	}
	return buf.Bytes()
}

// schemaName names the schema of type t: its name, prefixed with its
// package's for a type of another package (inbox.Steering is
// InboxSteering), so that it cannot take the place of one of this package
// of the same name (Steering, the section whose field it is).
func schemaName(t reflect.Type) string {
	pkg := t.PkgPath()
	if pkg == "" || pkg == reflect.TypeFor[Recipe]().PkgPath() {
		return t.Name()
	}
	base := pkg[strings.LastIndexByte(pkg, '/')+1:]
	return strings.ToUpper(base[:1]) + base[1:] + t.Name()
}
