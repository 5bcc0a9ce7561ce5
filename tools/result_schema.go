package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// ResultSchema is a worker recipe's result_schema, compiled: the JSON
// Schema that the result of a finish_task call with status done must
// match. The worker engine checks results with it (Check), and finish_task
// shows it to the model in its definition.
type ResultSchema struct {
	compiled *jsonschema.Schema
	text     string // the schema as compact JSON, as the model is shown it
}

// resultSchemaLoc names result schemas for the compiler (and in its
// messages).
const resultSchemaLoc = "urn:brain:result_schema"

// CompileResultSchema compiles doc, a JSON Schema as a recipe holds it
// (maps, lists and scalars decoded from YAML or JSON). A schema without
// "$schema" is read as draft 2020-12, and may refer only to itself. The
// error says what is wrong in the compiler's words, with the JSON Pointer
// of the keyword inside the schema, e.g.
//
//	not a valid JSON Schema: /properties/count/type: must be one of "array", "boolean", ...
func CompileResultSchema(doc map[string]any) (*ResultSchema, error) {
	raw, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw)) // numbers as json.Number, as the compiler wants them
	if err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	if err := c.AddResource(resultSchemaLoc, v); err != nil {
		return nil, err
	}
	sch, err := c.Compile(resultSchemaLoc)
	if err != nil {
		var sve *jsonschema.SchemaValidationError
		var ve *jsonschema.ValidationError
		if errors.As(err, &sve) && errors.As(sve.Err, &ve) {
			return nil, fmt.Errorf("not a valid JSON Schema: %s", strings.Join(describe(ve, nil), "; "))
		}
		return nil, fmt.Errorf("does not compile: %s", strings.ReplaceAll(err.Error(), resultSchemaLoc, "result_schema"))
	}
	return &ResultSchema{compiled: sch, text: string(raw)}, nil
}

// String returns the schema as compact JSON.
func (s *ResultSchema) String() string { return s.text }

// Check parses result as JSON and validates it against the schema. It
// returns the JSON, compacted, or a *ResultError whose message is written
// for the model: what is wrong, at which JSON Pointer of the result, and how
// to answer again. A result held in one Markdown code fence (```json ...
// ```) is read without the fence: models often wrap JSON so.
func (s *ResultSchema) Check(result string) (json.RawMessage, error) {
	text := unfence(result)
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
	if err != nil {
		return nil, &ResultError{Problems: []string{"not JSON (" + err.Error() + ")"}, NotJSON: true, schema: s.text}
	}
	if err := s.compiled.Validate(v); err != nil {
		var ve *jsonschema.ValidationError
		if !errors.As(err, &ve) {
			return nil, &ResultError{Problems: []string{err.Error()}, schema: s.text}
		}
		return nil, &ResultError{Problems: describe(ve, nil), schema: s.text}
	}
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(text)); err != nil { // valid JSON: cannot fail
		return nil, err
	}
	return b.Bytes(), nil
}

// ResultError is why a result does not match its result schema.
type ResultError struct {
	// Problems are the validator's errors, one per failure, each at the
	// JSON Pointer of the result it is about ("/count: got string, want
	// integer"), or the one reason the result is not JSON.
	Problems []string
	// NotJSON says the result could not be parsed.
	NotJSON bool
	schema  string
}

// Error is the error result the model reads: the problems, and how to
// answer again.
func (e *ResultError) Error() string {
	fix := "Fix it and call finish_task again, alone, with \"result\" set to the corrected JSON text " +
		"(JSON only, no other words), matching this JSON Schema: " + e.schema +
		". If the task cannot be carried out, call finish_task with status \"failed\" and say why in result."
	if e.NotJSON {
		return "finish_task refused: the result is " + e.Problems[0] + ". " + fix
	}
	return "finish_task refused: the result does not match the result schema:\n- " + strings.Join(e.Problems, "\n- ") + "\n" + fix
}

// unfence returns the text inside a Markdown code fence that is all of s,
// or s trimmed.
func unfence(s string) string {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "```") || !strings.HasSuffix(s, "```") || len(s) < 6 {
		return s
	}
	body := s[3 : len(s)-3]
	nl := strings.IndexByte(body, '\n')
	if nl < 0 || strings.ContainsAny(strings.TrimSpace(body[:nl]), " \t{[\"") { // the info string: json, or none
		return s
	}
	return strings.TrimSpace(body[nl+1:])
}
