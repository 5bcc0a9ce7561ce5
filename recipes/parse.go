package recipes

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// MaxFileSize is the largest recipe file accepted, in bytes. Larger files
// are refused before parsing.
const MaxFileSize = 1 << 20

// document is one recipe file, parsed and checked against the schema.
type document struct {
	file string     // as shown in messages
	stem string     // the file name without extension: the recipe's expected name; "" when not from a file
	root *yaml.Node // the top-level mapping; nil when the file could not be parsed
}

// parseDocument parses one recipe file: size check, YAML syntax, a single
// non-empty document, then the JSON Schema. It returns the document (with a
// nil root when nothing could be parsed) and every problem found.
func parseDocument(file, stem string, data []byte) (*document, Errors) {
	d := &document{file: file, stem: stem}
	if len(data) > MaxFileSize {
		return d, Errors{tooLarge(file, int64(len(data)))}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var top yaml.Node
	if err := dec.Decode(&top); err != nil {
		if errors.Is(err, io.EOF) {
			return d, Errors{emptyFile(file)}
		}
		return d, Errors{syntaxError(file, data, err)}
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return d, Errors{syntaxError(file, data, err)}
	default:
		line := next.Line
		if len(next.Content) > 0 {
			line = next.Content[0].Line
		}
		return d, Errors{{File: file, Line: line, Col: 1, Message: "a recipe file holds one YAML document; remove the `---` before this line and what follows, or move it into a file of its own"}}
	}
	root := &top
	if top.Kind == yaml.DocumentNode {
		if len(top.Content) == 0 {
			return d, Errors{emptyFile(file)}
		}
		root = top.Content[0]
	}
	if root.Kind == yaml.ScalarNode && root.ShortTag() == "!!null" {
		return d, Errors{emptyFile(file)}
	}
	v, errs := toValue(file, root)
	errs = append(errs, validateSchema(file, stem, root, v)...)
	d.root = root
	return d, errs
}

func tooLarge(file string, size int64) Error {
	return Error{File: file, Line: 1, Col: 1, Message: fmt.Sprintf(
		"file is too large (%d bytes); a recipe file may hold at most %d bytes (1 MiB): move long texts out or split it with `extends`",
		size, MaxFileSize)}
}

func emptyFile(file string) Error {
	return Error{File: file, Line: 1, Col: 1, Message: "file is empty; a recipe needs at least `name:` and `model:` (or `extends:` a recipe that has a model)"}
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// parserProblems are the problems of the YAML parser, as opposed to its
// scanner. yaml.v3 reports the line of a parser problem 0-based (the
// scanner's are 1-based), so one is added to theirs.
var parserProblems = map[string]bool{
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
	"did not find expected '-' indicator":    true,
	"did not find expected <document start>": true,
	"did not find expected <stream-start>":   true,
	"did not find expected key":              true,
	"did not find expected node content":     true,
	"found duplicate %TAG directive":         true,
	"found duplicate %YAML directive":        true,
	"found incompatible YAML document":       true,
	"found undefined tag handle":             true,
}

// syntaxError turns a YAML parser error into an Error. The parser gives a
// line but no column: the column is that of the line's first non-blank
// character.
func syntaxError(file string, data []byte, err error) Error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 1
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
		if parserProblems[msg] {
			line++
		}
	}
	text := lineText(data, line)
	col := 1 + len(text) - len(strings.TrimLeft(text, " "))
	if col > len(text) {
		col = 1
	}
	msg = "invalid YAML: " + msg
	switch {
	case strings.Contains(text, "\t"):
		msg += "; indent with spaces, YAML does not allow tabs"
	case strings.Contains(msg, "mapping values are not allowed"):
		msg += "; put quotes around a value that holds `: `, or check the indentation"
	case strings.Contains(msg, "did not find expected"), strings.Contains(msg, "could not find expected"):
		msg += "; check the indentation, the quotes and the brackets around this line"
	default:
		msg += "; check the indentation and the quotes around this line"
	}
	return Error{File: file, Line: line, Col: col, Message: msg}
}

// lineText returns line n (1-based) of data, without its newline.
func lineText(data []byte, n int) string {
	for i := 1; i < n; i++ {
		j := bytes.IndexByte(data, '\n')
		if j < 0 {
			return ""
		}
		data = data[j+1:]
	}
	if j := bytes.IndexByte(data, '\n'); j >= 0 {
		data = data[:j]
	}
	return strings.TrimSuffix(string(data), "\r")
}
