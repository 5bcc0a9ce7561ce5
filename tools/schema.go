package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// argSchema is the compiled schema of one tool's arguments.
type argSchema struct {
	compiled *jsonschema.Schema
	// props are the property names the top level declares, sorted; they
	// are suggested when the model sends an unknown one.
	props []string
}

// noLoader refuses every URL a schema refers to outside itself: a tool's
// schema (an MCP server's, say) must not make brain read files or fetch
// URLs. The draft metaschemas are built into the library and still load.
type noLoader struct{}

func (noLoader) Load(u string) (any, error) {
	return nil, fmt.Errorf("schemas may refer only to themselves, not to %s", u)
}

// CheckSchema reports why raw cannot be a tool's argument schema, as
// NewRegistry would refuse it (without the tool's name), or nil.
func CheckSchema(raw json.RawMessage) error {
	_, err := compileSchema("check", raw)
	return err
}

// compileSchema compiles a tool's argument schema. Schemas without
// "$schema" are read as draft 2020-12.
func compileSchema(name string, raw json.RawMessage) (*argSchema, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, errors.New(`schema is empty; want a JSON Schema like {"type": "object", "properties": {...}}`)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("schema is not valid JSON: %w", err)
	}
	obj, ok := doc.(map[string]any)
	if !ok || obj["type"] != "object" {
		return nil, errors.New(`schema must describe an object: want "type": "object" at its top level`)
	}
	loc := "urn:brain:tool:" + url.PathEscape(name)
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	if err := c.AddResource(loc, doc); err != nil {
		return nil, err
	}
	sch, err := c.Compile(loc)
	if err != nil {
		var sve *jsonschema.SchemaValidationError
		var ve *jsonschema.ValidationError
		if errors.As(err, &sve) && errors.As(sve.Err, &ve) {
			return nil, fmt.Errorf("schema is not a valid JSON Schema: %s", strings.Join(describe(ve, nil), "; "))
		}
		return nil, fmt.Errorf("schema does not compile: %w", err)
	}
	props := make([]string, 0, len(sch.Properties))
	for p := range sch.Properties {
		props = append(props, p)
	}
	slices.Sort(props)
	return &argSchema{compiled: sch, props: props}, nil
}

// Compact returns the JSON text s without insignificant space, for tool
// schemas written readably in the source. Text that
// is not JSON is returned as it is, for NewRegistry to report.
func Compact(s string) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		return json.RawMessage(s)
	}
	return b.Bytes()
}

// problem is one way a value fails its schema, at a JSON Pointer.
type problem struct {
	path string
	msg  string
}

func (p problem) String() string {
	path := p.path
	if path == "" {
		path = "(root)"
	}
	return path + ": " + p.msg
}

// describe rewrites a validation error as short, sorted messages, one per
// failure: "/message: missing required property",
// "/awaiting_user_input: got string, want boolean". rootProps, when not
// empty, is suggested for unknown properties of the top-level object.
func describe(err *jsonschema.ValidationError, rootProps []string) []string {
	var ps []problem
	collect(err, rootProps, &ps)
	slices.SortStableFunc(ps, func(a, b problem) int {
		if c := strings.Compare(a.path, b.path); c != 0 {
			return c
		}
		return strings.Compare(a.msg, b.msg)
	})
	ps = slices.Compact(ps)
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.String()
	}
	return out
}

// collect appends the problems of e and its causes to ps.
func collect(e *jsonschema.ValidationError, rootProps []string, ps *[]problem) {
	at := pointer(e.InstanceLocation)
	add := func(msg string, a ...any) {
		*ps = append(*ps, problem{at, fmt.Sprintf(msg, a...)})
	}
	switch k := e.ErrorKind.(type) {
	case *kind.Schema, *kind.Group, *kind.Reference, *kind.AllOf:
		for _, c := range e.Causes {
			collect(c, rootProps, ps)
		}
	case *kind.AnyOf:
		add("matches none of the allowed forms: %s", forms(e, at))
	case *kind.OneOf:
		if len(k.Subschemas) == 0 {
			add("matches none of the allowed forms: %s", forms(e, at))
		} else {
			add("matches more than one of the allowed forms (%d and %d), want exactly one", k.Subschemas[0]+1, k.Subschemas[1]+1)
		}
	case *kind.Required:
		for _, m := range k.Missing {
			*ps = append(*ps, problem{at + "/" + escape(m), "missing required property"})
		}
	case *kind.Dependency:
		for _, m := range k.Missing {
			*ps = append(*ps, problem{at + "/" + escape(m), fmt.Sprintf("missing, required when %q is present", k.Prop)})
		}
	case *kind.DependentRequired:
		for _, m := range k.Missing {
			*ps = append(*ps, problem{at + "/" + escape(m), fmt.Sprintf("missing, required when %q is present", k.Prop)})
		}
	case *kind.AdditionalProperties:
		msg := "unknown property, remove it"
		if at == "" && len(rootProps) > 0 {
			msg = "unknown property (allowed: " + strings.Join(rootProps, ", ") + ")"
		}
		for _, p := range k.Properties {
			*ps = append(*ps, problem{at + "/" + escape(p), msg})
		}
	case *kind.PropertyNames:
		*ps = append(*ps, problem{at + "/" + escape(k.Property), "property name not allowed"})
	case *kind.Type:
		add("got %s, want %s", k.Got, strings.Join(k.Want, " or "))
	case *kind.Enum:
		if len(k.Want) == 1 {
			add("must be %s", jsonText(k.Want[0]))
		} else {
			want := make([]string, len(k.Want))
			for i, w := range k.Want {
				want[i] = jsonText(w)
			}
			add("must be one of %s", strings.Join(want, ", "))
		}
	case *kind.Const:
		add("must be %s", jsonText(k.Want))
	case *kind.Format:
		add("is not a valid %s", k.Want)
	case *kind.MinProperties:
		add("has %d properties, want at least %d", k.Got, k.Want)
	case *kind.MaxProperties:
		add("has %d properties, want at most %d", k.Got, k.Want)
	case *kind.MinItems:
		add("has %d items, want at least %d", k.Got, k.Want)
	case *kind.MaxItems:
		add("has %d items, want at most %d", k.Got, k.Want)
	case *kind.AdditionalItems:
		add("has %d items more than allowed", k.Count)
	case *kind.UniqueItems:
		add("items %d and %d are equal, want unique items", k.Duplicates[0], k.Duplicates[1])
	case *kind.Contains:
		add("no item has the required form")
	case *kind.MinContains:
		add("%d items have the required form, want at least %d", len(k.Got), k.Want)
	case *kind.MaxContains:
		add("%d items have the required form, want at most %d", len(k.Got), k.Want)
	case *kind.MinLength:
		add("is %s long, want at least %d", characters(k.Got), k.Want)
	case *kind.MaxLength:
		add("is %s long, want at most %d", characters(k.Got), k.Want)
	case *kind.Pattern:
		add("does not match the pattern %s", k.Want)
	case *kind.Minimum:
		add("is %s, want at least %s", number(k.Got), number(k.Want))
	case *kind.Maximum:
		add("is %s, want at most %s", number(k.Got), number(k.Want))
	case *kind.ExclusiveMinimum:
		add("is %s, want more than %s", number(k.Got), number(k.Want))
	case *kind.ExclusiveMaximum:
		add("is %s, want less than %s", number(k.Got), number(k.Want))
	case *kind.MultipleOf:
		add("is %s, want a multiple of %s", number(k.Got), number(k.Want))
	case *kind.ContentEncoding:
		add("is not %s-encoded", k.Want)
	case *kind.ContentMediaType:
		add("is not valid %s", k.Want)
	case *kind.ContentSchema:
		add("content does not have the required form")
	case *kind.Not:
		add("has a form that is not allowed")
	case *kind.FalseSchema:
		add("is not allowed")
	default:
		add("fails the schema's %q rule", strings.Join(e.ErrorKind.KeywordPath(), "/"))
	}
}

// forms describes why a value matched none of the alternatives of an anyOf
// or oneOf: each alternative's problems, alternatives separated by " | ".
// Paths below at are shown relative to it.
func forms(e *jsonschema.ValidationError, at string) string {
	alts := make([]string, 0, len(e.Causes))
	for _, c := range e.Causes {
		var ps []problem
		collect(c, nil, &ps)
		msgs := make([]string, len(ps))
		for i, p := range ps {
			if rel := strings.TrimPrefix(p.path, at); rel != "" {
				msgs[i] = rel + ": " + p.msg
			} else {
				msgs[i] = p.msg
			}
		}
		alts = append(alts, strings.Join(msgs, ", "))
	}
	return strings.Join(alts, " | ")
}

// characters returns "1 character", "2 characters".
func characters(n int) string {
	if n == 1 {
		return "1 character"
	}
	return strconv.Itoa(n) + " characters"
}

// pointer returns the JSON Pointer of a location given as tokens.
func pointer(tokens []string) string {
	var sb strings.Builder
	for _, t := range tokens {
		sb.WriteByte('/')
		sb.WriteString(escape(t))
	}
	return sb.String()
}

// escape escapes one JSON Pointer token.
func escape(tok string) string {
	if !strings.ContainsAny(tok, "~/") {
		return tok
	}
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(tok)
}

// jsonText returns v as JSON, for quoting allowed values.
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// number formats a schema number without fractions like "1/10".
func number(r *big.Rat) string {
	if r == nil {
		return "?"
	}
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}
