package recipes

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"go.yaml.in/yaml/v3"
)

// The patterns of the schema, and how a message says them in words.
const (
	namePattern       = `^[a-z0-9][a-z0-9_-]*$`
	serverNamePattern = `^[A-Za-z0-9_-]+$`
	hostedToolPattern = `^[a-z][a-z0-9_]*$`
)

var patternWords = map[string]string{
	namePattern:       "must be lowercase letters, digits, `-` and `_`, starting with a letter or digit",
	serverNamePattern: "must be letters, digits, `-` and `_` (a dot separates a server from its tools)",
	hostedToolPattern: "must be lowercase letters, digits and `_`, starting with a letter",
	durationPattern:   "must be a duration such as `30s`, `5m` or `1h30m`",
	skillIDPattern:    "must be letters, digits, `_`, `.` and `-`, starting with a letter or digit",
	baseURLPattern:    "must be an http or https URL such as `http://127.0.0.1:11434/v1`, without user, password, query or fragment",
}

// compiledSchema is the recipe schema, compiled once for validation, with
// its generic form for looking up the keywords an error refers to.
type compiledSchema struct {
	schema *jsonschema.Schema
	doc    any
}

var recipeSchema = sync.OnceValue(func() compiledSchema {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(Schema()))
	if err != nil {
		panic(fmt.Sprintf("recipes: reading the schema: %v", err))
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(SchemaID, doc); err != nil {
		panic(fmt.Sprintf("recipes: adding the schema: %v", err))
	}
	s, err := c.Compile(SchemaID)
	if err != nil {
		panic(fmt.Sprintf("recipes: compiling the schema: %v", err))
	}
	return compiledSchema{schema: s, doc: doc}
})

// validateSchema checks the generic value v of the document root against
// the recipe schema and returns one Error per problem, at its node.
func validateSchema(file, stem string, root *yaml.Node, v any) Errors {
	cs := recipeSchema()
	err := cs.schema.Validate(v)
	if err == nil {
		return nil
	}
	var verr *jsonschema.ValidationError
	if !errors.As(err, &verr) {
		return Errors{{File: file, Line: root.Line, Col: root.Column, Message: err.Error()}}
	}
	m := &schemaMessages{file: file, stem: stem, root: root, doc: cs.doc}
	m.walk(verr)
	return m.errs
}

// schemaMessages turns validation errors into Errors in our own words.
type schemaMessages struct {
	file string
	stem string
	root *yaml.Node
	doc  any
	errs Errors
}

func (m *schemaMessages) add(n *yaml.Node, path, msg string) {
	m.errs = append(m.errs, Error{File: m.file, Line: n.Line, Col: n.Column, Path: path, Message: msg})
}

func (m *schemaMessages) walk(e *jsonschema.ValidationError) {
	path, val := locate(m.root, e.InstanceLocation)
	switch k := e.ErrorKind.(type) {
	case *kind.Schema, *kind.Group, *kind.Reference, *kind.AllOf:
		for _, c := range e.Causes {
			m.walk(c)
		}
	case *kind.OneOf, *kind.AnyOf:
		m.alternatives(e, path, val)
	case *kind.AdditionalProperties:
		allowed := m.properties(e.SchemaURL)
		for _, p := range k.Properties {
			pk, _ := mappingValue(val, p)
			if pk == nil {
				pk = val
			}
			msg := "unknown field"
			if hint := didYouMean(p, allowed); hint != "" {
				msg += hint
			} else if len(allowed) > 0 {
				msg += "; the fields here are " + backquoted(allowed)
			}
			m.add(pk, joinKey(path, p), msg)
		}
	case *kind.Required:
		for _, r := range k.Missing {
			fix := "`" + r + "`"
			if path == "" && r == "name" && m.stem != "" {
				fix = "`name: " + m.stem + "`"
			}
			m.add(val, joinKey(path, r), "required field is missing; add "+fix)
		}
	case *kind.Type:
		m.add(val, path, typeMessage(path, k.Want, val))
	case *kind.Enum:
		want := make([]string, len(k.Want))
		for i, w := range k.Want {
			want[i] = fmt.Sprint(w)
		}
		msg := fmt.Sprintf("must be one of %s (got %s)", backquoted(want), describe(val))
		if s, ok := k.Got.(string); ok {
			msg += didYouMean(s, want)
		}
		m.add(val, path, msg)
	case *kind.Minimum, *kind.Maximum, *kind.ExclusiveMinimum, *kind.ExclusiveMaximum:
		m.add(val, path, m.rangeMessage(e.SchemaURL, val))
	case *kind.MinLength:
		if k.Want == 1 {
			m.add(val, path, "must not be empty; write a value or leave the field out")
		} else {
			m.add(val, path, fmt.Sprintf("must be at least %d characters long (got %d)", k.Want, k.Got))
		}
	case *kind.MaxLength:
		m.add(val, path, fmt.Sprintf("must be at most %d characters long (got %d)", k.Want, k.Got))
	case *kind.Pattern:
		words, ok := patternWords[k.Want]
		if !ok {
			words = "must match the pattern `" + k.Want + "`"
		}
		m.add(val, path, fmt.Sprintf("%s (got %s)", words, describe(val)))
	case *kind.UniqueItems:
		first, dup := k.Duplicates[0], k.Duplicates[1]
		n := val
		if dup < len(val.Content) {
			n = val.Content[dup]
		}
		m.add(n, joinIndex(path, dup), fmt.Sprintf("repeats %s; remove one", joinIndex(path, first)))
	default:
		// Not reached with the recipe schema: every keyword it uses is
		// handled above.
		m.add(val, path, fmt.Sprintf("does not match the recipe schema (keyword `%s`)", strings.Join(e.ErrorKind.KeywordPath(), "/")))
	}
}

// alternatives reports a failed oneOf/anyOf. The alternatives whose type
// does not fit the value are dropped; if one is left, its own errors say
// what is wrong; if none is left, the value has the wrong type.
func (m *schemaMessages) alternatives(e *jsonschema.ValidationError, path string, val *yaml.Node) {
	if msg := m.choices(e, val); msg != "" {
		m.add(val, path, msg)
		return
	}
	var wants []string
	var fitting []*jsonschema.ValidationError
	for _, c := range e.Causes {
		if t, ok := c.ErrorKind.(*kind.Type); ok && slices.Equal(c.InstanceLocation, e.InstanceLocation) {
			wants = append(wants, t.Want...)
			continue
		}
		fitting = append(fitting, c)
	}
	if len(fitting) == 0 {
		m.add(val, path, typeMessage(path, wants, val))
		return
	}
	for _, c := range fitting {
		m.walk(c)
	}
}

// choices words a failed oneOf/anyOf with a constant among its
// alternatives, when the value is none of them:
// "must be `required` or a mapping of `by`, `timeout` (got "maybe")". It
// returns "" when an alternative failed on more than its type or constant:
// that alternative's own errors say more.
func (m *schemaMessages) choices(e *jsonschema.ValidationError, val *yaml.Node) string {
	var words, consts []string
	for _, c := range e.Causes {
		if !slices.Equal(c.InstanceLocation, e.InstanceLocation) {
			return ""
		}
		s, _ := m.schemaAt(c.SchemaURL).(map[string]any)
		if v, ok := s["const"]; ok {
			consts = append(consts, fmt.Sprint(v))
			words = append(words, "`"+fmt.Sprint(v)+"`")
			continue
		}
		t, ok := c.ErrorKind.(*kind.Type)
		if !ok {
			return ""
		}
		for _, w := range t.Want {
			word := typeWords(w)
			if props := m.properties(c.SchemaURL); w == "object" && len(props) > 0 {
				word += " of " + backquoted(props)
			}
			words = append(words, word)
		}
	}
	if len(consts) == 0 {
		return ""
	}
	msg := fmt.Sprintf("must be %s (got %s)", strings.Join(words, " or "), describe(val))
	if val.Kind == yaml.ScalarNode {
		msg += didYouMean(val.Value, consts)
	}
	return msg
}

// typeMessage says which types are wanted, what was found, and a fix where
// a common mistake explains it.
func typeMessage(path string, want []string, got *yaml.Node) string {
	words := make([]string, len(want))
	for i, w := range want {
		words[i] = typeWords(w)
	}
	msg := fmt.Sprintf("must be %s (got %s)", strings.Join(words, " or "), describe(got))
	if path == "" {
		msg = fmt.Sprintf("a recipe file must hold a mapping of fields such as `name:` and `model:` (got %s)", describe(got))
	}
	got = deref(got)
	switch {
	case path == "validation" && got.ShortTag() == "!!bool":
		msg += "; write `validation: {enabled: " + got.Value + "}`"
	case got.Kind == yaml.ScalarNode && got.ShortTag() == "!!str" && slices.ContainsFunc(want, func(w string) bool {
		return resolvesTo(got.Value, w)
	}):
		msg += "; remove the quotes"
	case got.Kind == yaml.ScalarNode && slices.Contains(want, "array"):
		msg += "; write a list, one `- item` per line"
	}
	return msg
}

func typeWords(t string) string {
	switch t {
	case "object":
		return "a mapping"
	case "array":
		return "a list"
	case "string":
		return "a string"
	case "integer":
		return "an integer"
	case "number":
		return "a number"
	case "boolean":
		return "true or false"
	case "null":
		return "empty"
	}
	return t
}

// resolvesTo reports whether the text of a quoted scalar would be of JSON
// type t without its quotes.
func resolvesTo(s, t string) bool {
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(s), &n); err != nil || len(n.Content) != 1 {
		return false
	}
	switch tag := n.Content[0].ShortTag(); t {
	case "integer":
		return tag == "!!int"
	case "number":
		return tag == "!!int" || tag == "!!float"
	case "boolean":
		return tag == "!!bool"
	}
	return false
}

// rangeMessage says the bounds of a number from the schema at url.
func (m *schemaMessages) rangeMessage(url string, val *yaml.Node) string {
	s, _ := m.schemaAt(url).(map[string]any)
	lo, hasLo := s["minimum"]
	hi, hasHi := s["maximum"]
	got := describe(val)
	switch {
	case hasLo && hasHi:
		return fmt.Sprintf("must be between %v and %v (got %s)", lo, hi, got)
	case hasLo:
		return fmt.Sprintf("must be at least %v (got %s)", lo, got)
	case hasHi:
		return fmt.Sprintf("must be at most %v (got %s)", hi, got)
	}
	return fmt.Sprintf("is out of range (got %s)", got)
}

// properties returns the sorted field names of the object schema at url.
func (m *schemaMessages) properties(url string) []string {
	s, _ := m.schemaAt(url).(map[string]any)
	props, _ := s["properties"].(map[string]any)
	names := make([]string, 0, len(props))
	for name := range props {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// schemaAt returns the part of the generic schema that url points at.
func (m *schemaMessages) schemaAt(url string) any {
	_, frag, _ := strings.Cut(url, "#")
	v := m.doc
	for _, tok := range strings.Split(strings.TrimPrefix(frag, "/"), "/") {
		if tok == "" {
			continue
		}
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		switch x := v.(type) {
		case map[string]any:
			v = x[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}
