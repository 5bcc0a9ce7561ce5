package recipes

import (
	"fmt"
	"math"
	"regexp"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// maxValues bounds the values one file may expand to, aliases included, so
// that a small file of nested aliases cannot exhaust memory.
const maxValues = 100_000

// converter turns a yaml.Node tree into the generic value (map[string]any,
// []any, string, int, float64, bool, nil) that the JSON Schema validates,
// reporting what JSON cannot express: duplicate keys, merge keys, keys that
// are not scalars.
type converter struct {
	file   string
	budget int
	errs   Errors
}

func toValue(file string, n *yaml.Node) (any, Errors) {
	c := &converter{file: file, budget: maxValues}
	v := c.value(n, "")
	return v, c.errs
}

func (c *converter) fail(n *yaml.Node, path, msg string) {
	c.errs = append(c.errs, Error{File: c.file, Line: n.Line, Col: n.Column, Path: path, Message: msg})
}

func (c *converter) value(n *yaml.Node, path string) any {
	if c.budget--; c.budget == 0 {
		c.fail(n, path, fmt.Sprintf("the document expands to more than %d values through aliases; write it out without `*alias` references", maxValues))
	}
	if c.budget < 0 {
		return nil
	}
	switch n.Kind {
	case yaml.AliasNode:
		return c.value(n.Alias, path)
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		first := make(map[string]*yaml.Node, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := deref(n.Content[i]), n.Content[i+1]
			switch {
			case k.ShortTag() == "!!merge":
				c.fail(k, path, "YAML merge keys (`<<`) are not supported; use `extends` to build on another recipe, or write the fields out")
				continue
			case k.Kind != yaml.ScalarNode:
				c.fail(k, path, "a key must be a plain name, not a list or a mapping")
				continue
			}
			p := joinKey(path, k.Value)
			if f, dup := first[k.Value]; dup {
				c.fail(k, p, fmt.Sprintf("set twice (first at line %d); remove one", f.Line))
				continue
			}
			first[k.Value] = k
			m[k.Value] = c.value(v, p)
		}
		return m
	case yaml.SequenceNode:
		s := make([]any, len(n.Content))
		for i, e := range n.Content {
			s[i] = c.value(e, joinIndex(path, i))
		}
		return s
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!int", "!!float", "!!bool", "!!null":
			var v any
			if err := n.Decode(&v); err != nil {
				return n.Value
			}
			if f, ok := v.(float64); ok && (math.IsInf(f, 0) || math.IsNaN(f)) {
				return n.Value
			}
			return v
		}
		return n.Value
	}
	return nil
}

// deref follows alias nodes.
func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// mappingValue returns the key and value nodes of key in mapping m, or nils.
func mappingValue(m *yaml.Node, key string) (k, v *yaml.Node) {
	m = deref(m)
	if m == nil || m.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if kn := deref(m.Content[i]); kn.Kind == yaml.ScalarNode && kn.Value == key {
			return kn, m.Content[i+1]
		}
	}
	return nil, nil
}

// locate follows loc, a JSON pointer split into tokens, from root. It returns
// the field path of the location and its value node (the deepest node
// reached when loc leaves the document).
func locate(root *yaml.Node, loc []string) (path string, val *yaml.Node) {
	val = deref(root)
	for _, tok := range loc {
		switch val.Kind {
		case yaml.MappingNode:
			_, v := mappingValue(val, tok)
			if v == nil {
				return joinKey(path, tok), val
			}
			path, val = joinKey(path, tok), deref(v)
		case yaml.SequenceNode:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(val.Content) {
				return path, val
			}
			path, val = joinIndex(path, i), deref(val.Content[i])
		default:
			return path, val
		}
	}
	return path, val
}

var plainKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// joinKey appends a mapping key to a field path: a.b, or a["b c"] for keys
// that are not plain names.
func joinKey(path, key string) string {
	if !plainKey.MatchString(key) {
		return path + "[" + strconv.Quote(key) + "]"
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

// joinIndex appends a list index to a field path: a[3].
func joinIndex(path string, i int) string {
	return path + "[" + strconv.Itoa(i) + "]"
}

// describe renders a node for "(got ...)" in messages.
func describe(n *yaml.Node) string {
	n = deref(n)
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	switch n.ShortTag() {
	case "!!null":
		return "nothing"
	case "!!str", "!!timestamp", "!!binary":
		return strconv.Quote(n.Value)
	}
	return n.Value
}
