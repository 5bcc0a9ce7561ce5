package recipes

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

var validName = regexp.MustCompile(namePattern)

// CheckName says what is wrong with name as a recipe's name, or nil.
func CheckName(name string) error {
	if !validName.MatchString(name) {
		return fmt.Errorf("%q is not a recipe name: it %s", name, patternWords[namePattern])
	}
	return nil
}

// chain returns e followed by its parents, nearest first, or the problems
// that stop the chain: problems in any of its files, a missing parent, a
// cycle. Problems in a parent are reported at the parent's file.
func (l *loader) chain(e *entry) ([]*entry, Errors) {
	chain := []*entry{e}
	var errs Errors
	for cur := e; ; {
		errs = append(errs, cur.errs...)
		if cur.doc.root == nil {
			return nil, errs
		}
		_, ext := mappingValue(cur.doc.root, "extends")
		ext = deref(ext)
		if ext == nil || ext.Kind != yaml.ScalarNode || ext.ShortTag() != "!!str" || !validName.MatchString(ext.Value) {
			// No parent, or a malformed extends that the schema reported.
			break
		}
		parent, perr := l.parent(cur, ext)
		if perr != nil {
			errs = append(errs, *perr)
			break
		}
		if slices.Contains(chain, parent) {
			names := make([]string, 0, len(chain)+1)
			for _, c := range chain {
				names = append(names, c.doc.stem)
			}
			names = append(names, parent.doc.stem)
			_, start := mappingValue(e.doc.root, "extends")
			errs = append(errs, Error{
				File: e.doc.file, Line: start.Line, Col: start.Column, Path: "extends",
				Message: fmt.Sprintf("cycle %s; remove `extends` from one of these recipes", strings.Join(names, " -> ")),
			})
			break
		}
		chain = append(chain, parent)
		cur = parent
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return chain, nil
}

// parent finds the recipe that cur extends: NAME.yaml next to cur, then the
// built-in recipe NAME. A recipe that extends its own name builds on the
// built-in recipe of that name, so that a directory can override a built-in
// recipe by extending it.
func (l *loader) parent(cur *entry, ext *yaml.Node) (*entry, *Error) {
	name, self := ext.Value, cur.doc.stem
	if self == "" {
		// Not from a file (Parse): the recipe's own name.
		if _, n := mappingValue(cur.doc.root, "name"); n != nil {
			self = deref(n).Value
		}
	}
	dir := cur.src
	if dir != nil && dir.builtin {
		dir = nil
	}
	if dir != nil && name != self && dir.has(name) {
		return l.open(dir, name), nil
	}
	if !(cur.src != nil && cur.src.builtin && name == self) && l.builtin.has(name) {
		return l.open(l.builtin, name), nil
	}

	fail := func(msg string) *Error {
		return &Error{File: cur.doc.file, Line: ext.Line, Col: ext.Column, Path: "extends", Message: msg}
	}
	if name == self {
		return nil, fail(fmt.Sprintf("a recipe cannot extend itself, and there is no built-in recipe `%s` to build on; remove `extends`", name))
	}
	var candidates []string
	where := "no built-in recipe of that name"
	if dir != nil {
		candidates = dir.names()
		where = fmt.Sprintf("no %s.yaml next to this file and no built-in recipe of that name", name)
	}
	builtins := l.builtin.names()
	candidates = slices.DeleteFunc(append(candidates, builtins...), func(c string) bool { return c == self })
	msg := fmt.Sprintf("unknown recipe `%s`: %s", name, where)
	if hint := didYouMean(name, candidates); hint != "" {
		msg += hint
	} else {
		msg += "; the built-in recipes are " + backquoted(builtins)
	}
	return nil, fail(msg)
}

// merge returns child laid over parent: mappings merge key by key, deeply;
// anything else in child (scalars, lists) replaces what parent has. Nodes are
// shared, not copied; a new mapping node takes child's position and file.
func (l *loader) merge(parent, child *yaml.Node, file string) *yaml.Node {
	p, c := deref(parent), deref(child)
	if p.Kind != yaml.MappingNode || c.Kind != yaml.MappingNode {
		return child
	}
	out := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: c.Line, Column: c.Column}
	l.origins[out] = file
	overridden := make(map[string]bool)
	for i := 0; i+1 < len(p.Content); i += 2 {
		key := deref(p.Content[i]).Value
		ck, cv := mappingValue(c, key)
		if ck == nil {
			out.Content = append(out.Content, p.Content[i], p.Content[i+1])
			continue
		}
		overridden[key] = true
		out.Content = append(out.Content, ck, l.merge(p.Content[i+1], cv, file))
	}
	for i := 0; i+1 < len(c.Content); i += 2 {
		if !overridden[deref(c.Content[i]).Value] {
			out.Content = append(out.Content, c.Content[i], c.Content[i+1])
		}
	}
	return out
}
