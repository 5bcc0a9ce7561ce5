package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/engine-brain/brain/api"
)

// maxConfigFile bounds the config file: it holds settings and token hashes.
const maxConfigFile = 1 << 20

// readConfigFile applies the config file at path to c; lookupEnv reads the
// API keys that providers name in api_key_env. The YAML is strict:
// unknown and repeated keys are errors, and every error names the file,
// line, column and field, like the recipe loader's.
//
// The file is walked as a yaml.Node tree rather than decoded into a struct
// with the decoder's KnownFields: its messages name Go types and give the
// line only ("line 3: field lisen not found in type main.fileConfig"),
// where a person needs the column and the field's path. The walk is as
// strict, and each value goes through the same parser as its flag.
func readConfigFile(path string, c *serveConfig, lookupEnv func(string) (string, bool)) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("config file: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxConfigFile+1))
	if err != nil {
		return fmt.Errorf("config file: %w", err)
	}
	if len(data) > maxConfigFile {
		return fmt.Errorf("%s: larger than %d bytes; is it the right file?", path, maxConfigFile)
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil // an empty file sets nothing
		}
		return syntaxError(path, err)
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return syntaxError(path, err)
	default:
		return fmt.Errorf("%s:%d:%d: a second YAML document; keep one", path, extra.Line, extra.Column)
	}
	y := &yamlFile{name: path, env: lookupEnv}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return nil // a file of comments only
	}
	keys := []string{"auth", "providers"}
	bySetting := map[string]setting{}
	sections := map[string][]setting{} // log: its settings, under it
	for _, s := range settings {
		if s.section == "" {
			keys = append(keys, s.key())
			bySetting[s.key()] = s
			continue
		}
		if sections[s.section] == nil {
			keys = append(keys, s.section)
		}
		sections[s.section] = append(sections[s.section], s)
	}
	y.mapping(root, "", keys, func(key string, v *yaml.Node) {
		switch key {
		case "auth":
			y.auth(v, c)
			return
		case "providers":
			y.providers(v, c)
			return
		}
		if in, ok := sections[key]; ok {
			y.section(v, key, in, c)
			return
		}
		y.setting(v, key, bySetting[key], c)
		if key == "recipes" {
			c.Recipes = relativeTo(path, c.Recipes)
		}
	})
	return errors.Join(y.errs...)
}

// setting applies the value v of s, at path in the file, to c.
func (y *yamlFile) setting(v *yaml.Node, path string, s setting, c *serveConfig) {
	val, ok := y.scalar(v, path, s.name == "engines")
	if !ok {
		return
	}
	if err := s.set(c, val); err != nil {
		y.errorf(v, path, "%v", err)
	}
}

// section applies a mapping of settings, the file's log: {format, level}.
func (y *yamlFile) section(n *yaml.Node, path string, in []setting, c *serveConfig) {
	keys := make([]string, len(in))
	for i, s := range in {
		keys[i] = s.fileKey()
	}
	y.mapping(n, path, keys, func(key string, v *yaml.Node) {
		y.setting(v, path+"."+key, in[slices.Index(keys, key)], c)
	})
}

// yamlFile collects the problems of one YAML file.
type yamlFile struct {
	name string
	env  func(string) (string, bool) // reads the API keys
	errs []error
}

func (y *yamlFile) errorf(n *yaml.Node, path, format string, args ...any) {
	y.errs = append(y.errs, fmt.Errorf("%s:%d:%d: %s: %s", y.name, n.Line, n.Column, path, fmt.Sprintf(format, args...)))
}

// mapping calls fn for each key of n, which must be a mapping, and reports
// keys that are unknown or repeated. hint, when set, adds advice for an
// unknown key.
func (y *yamlFile) mapping(n *yaml.Node, path string, known []string, fn func(key string, v *yaml.Node), hint ...func(key string) string) {
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		y.errorf(n, orRoot(path), "want a mapping of %s", strings.Join(known, ", "))
		return
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		field := fieldPath(path, k.Value)
		if line, ok := seen[k.Value]; ok {
			y.errorf(k, field, "repeated (first at line %d); keep one", line)
			continue
		}
		seen[k.Value] = k.Line
		if !slices.Contains(known, k.Value) {
			msg := "unknown field; want one of " + strings.Join(known, ", ")
			for _, h := range hint {
				if s := h(k.Value); s != "" {
					msg = s
				}
			}
			y.errorf(k, field, "%s", msg)
			continue
		}
		fn(k.Value, v)
	}
}

// scalar returns the text of a scalar value; list, when true, also takes a
// sequence of scalars, joined with commas.
func (y *yamlFile) scalar(n *yaml.Node, path string, list bool) (string, bool) {
	n = deref(n)
	switch {
	case n.Kind == yaml.ScalarNode && n.Tag == "!!null":
		y.errorf(n, path, "want a value; remove the key to keep the default")
	case n.Kind == yaml.ScalarNode:
		return n.Value, true
	case n.Kind == yaml.SequenceNode && list:
		var items []string
		for _, item := range n.Content {
			item = deref(item)
			if item.Kind != yaml.ScalarNode {
				y.errorf(item, path, "want a list of words")
				return "", false
			}
			items = append(items, item.Value)
		}
		return strings.Join(items, ","), true
	default:
		y.errorf(n, path, "want a single value, not a %s", kindName(n.Kind))
	}
	return "", false
}

var sha256Hex = regexp.MustCompile(`^[0-9a-f]{64}$`)

// auth reads auth: {tokens: [{name, role, sha256}]}.
func (y *yamlFile) auth(n *yaml.Node, c *serveConfig) {
	y.mapping(n, "auth", []string{"tokens"}, func(_ string, v *yaml.Node) {
		v = deref(v)
		if v.Kind != yaml.SequenceNode {
			y.errorf(v, "auth.tokens", "want a list of {name, role, sha256}")
			return
		}
		names, hashes := map[string]bool{}, map[string]bool{}
		for i, item := range v.Content {
			path := fmt.Sprintf("auth.tokens[%d]", i)
			var t api.Token
			y.mapping(item, path, tokenFields, func(key string, v *yaml.Node) {
				s, ok := y.scalar(v, path+"."+key, false)
				if !ok {
					return
				}
				switch key {
				case "name":
					if names[s] {
						y.errorf(v, path+".name", "%q is already the name of another token; names must be unique", s)
						return
					}
					names[s] = true
					t.Name = s
				case "role":
					switch r := api.Role(s); r {
					case api.RoleUser, api.RoleOperator, api.RoleAdmin:
						t.Role = r
					default:
						y.errorf(v, path+".role", "want user, operator or admin (got %q)", s)
					}
				case "sha256":
					s = strings.ToLower(s)
					switch {
					case !sha256Hex.MatchString(s):
						y.errorf(v, path+".sha256", "want the 64 hex digits of the token's SHA-256, as printed by `brain token hash` or `brain token new`")
					case hashes[s]:
						y.errorf(v, path+".sha256", "the same hash as another token; give each holder their own token")
					default:
						hashes[s] = true
						t.SHA256 = s
					}
				}
			}, func(key string) string {
				if key == "token" || key == "secret" || key == "value" {
					return "plain tokens are never stored: put the token's hash in sha256 (`brain token hash` reads the token on stdin and prints it)"
				}
				return ""
			})
			if deref(item).Kind == yaml.MappingNode {
				for _, key := range tokenFields {
					if !hasKey(item, key) {
						y.errorf(item, path, "%s: required", key)
					}
				}
			}
			if t.Name != "" && t.Role != "" && t.SHA256 != "" {
				c.Tokens = append(c.Tokens, t)
			}
		}
	})
}

// tokenFields are the fields of an auth.tokens entry, all required.
var tokenFields = []string{"name", "role", "sha256"}

// hasKey reports whether mapping n has key (whatever its value).
func hasKey(n *yaml.Node, key string) bool {
	n = deref(n)
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return true
		}
	}
	return false
}

// lineRE finds the "line N:" of a yaml syntax error.
var lineRE = regexp.MustCompile(`^yaml: line (\d+): `)

// syntaxError reports a YAML syntax error as file:line: message.
func syntaxError(path string, err error) error {
	msg := err.Error()
	if m := lineRE.FindStringSubmatch(msg); m != nil {
		return fmt.Errorf("%s:%s: invalid YAML: %s", path, m[1], msg[len(m[0]):])
	}
	return fmt.Errorf("%s: invalid YAML: %s", path, strings.TrimPrefix(msg, "yaml: "))
}

func deref(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func kindName(k yaml.Kind) string {
	switch k {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	}
	return "value"
}

func fieldPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func orRoot(path string) string {
	if path == "" {
		return "(top level)"
	}
	return path
}

// relativeTo resolves a path written in the config file at file against
// the file's directory.
func relativeTo(file, path string) string {
	if path == "" || filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(filepath.Dir(file), path)
}
