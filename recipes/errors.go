package recipes

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrNotFound is returned by Library.Get for a name that no recipe has.
var ErrNotFound = errors.New("recipes: recipe not found")

// Error is one problem in a recipe file, at a position, about a field.
type Error struct {
	File    string // the file as given, or <builtin>/NAME.yaml
	Line    int    // 1-based; 0 when the file could not be read
	Col     int    // 1-based
	Path    string // the field, like validation.max_corrections or tools[2]; empty for the whole file
	Message string // what is wrong and how to fix it
}

// Error formats the problem as file:line:col: path: message. The path is
// left out for problems of the whole file, line and column for problems
// reading it (Line 0).
func (e Error) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: %s", e.File, e.Message)
	}
	if e.Path == "" {
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Message)
	}
	return fmt.Sprintf("%s:%d:%d: %s: %s", e.File, e.Line, e.Col, e.Path, e.Message)
}

// Errors is a list of problems, sorted by file and position. It is the error
// type that loading and linting return.
type Errors []Error

// Error formats one problem per line.
func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// err returns es as an error, nil when empty.
func (es Errors) err() error {
	if len(es) == 0 {
		return nil
	}
	return es
}

// normalize sorts the problems by file and position and removes duplicates.
func (es Errors) normalize() Errors {
	es = slices.Clone(es)
	slices.SortFunc(es, func(a, b Error) int {
		return cmp.Or(
			cmp.Compare(a.File, b.File),
			cmp.Compare(a.Line, b.Line),
			cmp.Compare(a.Col, b.Col),
			cmp.Compare(a.Path, b.Path),
			cmp.Compare(a.Message, b.Message),
		)
	})
	return slices.Compact(es)
}
