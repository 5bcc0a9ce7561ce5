package main

import (
	"fmt"
	"strconv"

	"go.yaml.in/yaml/v3"

	"github.com/engine-brain/brain/llm/providers"
	"github.com/engine-brain/brain/recipes"
)

// maxProviderAttempts bounds max_attempts, as llm/openai does.
const maxProviderAttempts = 20

// providerFields are the keys of a providers entry.
var providerFields = []string{"name", "type", "base_url", "api_key_env", "model", "max_attempts", "max_context_tokens"}

// providers reads providers: [{name, type, base_url, api_key_env, model,
// max_attempts, max_context_tokens}] into c.Providers, reading each key
// from the environment.
func (y *yamlFile) providers(n *yaml.Node, c *serveConfig) {
	n = deref(n)
	if n.Kind != yaml.SequenceNode {
		y.errorf(n, "providers", "want a list of {name, type, base_url, api_key_env, model, max_attempts, max_context_tokens}")
		return
	}
	names := map[string]int{} // name → index of its entry
	for i, item := range n.Content {
		if p, ok := y.provider(item, fmt.Sprintf("providers[%d]", i), i, names); ok {
			c.Providers = append(c.Providers, p)
		}
	}
}

// provider reads the entry item, the i-th, and reports whether it is
// whole and valid.
func (y *yamlFile) provider(item *yaml.Node, path string, i int, names map[string]int) (providers.Config, bool) {
	before := len(y.errs)
	var p providers.Config
	y.mapping(item, path, providerFields, func(key string, v *yaml.Node) {
		s, ok := y.scalar(v, path+"."+key, false)
		if !ok {
			return
		}
		var err error
		switch key {
		case "name":
			err = providers.CheckName(s)
			if j, dup := names[s]; dup && err == nil {
				err = fmt.Errorf("%q is already the name of providers[%d]; names must be unique", s, j)
			}
			names[s], p.Name = i, s
		case "type":
			err = providers.CheckType(s)
			p.Type = s
		case "base_url":
			err = providers.CheckBaseURL(s)
			p.BaseURL = s
		case "api_key_env":
			p.APIKeyEnv = s
			p.APIKey, err = providers.ReadKey(s, y.env)
		case "model":
			p.Model = s
		case "max_attempts":
			p.MaxAttempts, err = parseAttempts(s)
		case "max_context_tokens":
			p.MaxContextTokens, err = parseContextTokens(s)
		}
		if err != nil {
			y.errorf(v, path+"."+key, "%v", err)
		}
	}, func(key string) string {
		switch key {
		case "api_key", "key", "token", "secret", "password":
			return "keys never go in the file: export the key in an environment variable and put the variable's name in api_key_env"
		case "url", "endpoint", "base":
			return "unknown field; the server's address is base_url"
		}
		return ""
	})
	if deref(item).Kind != yaml.MappingNode {
		return p, false
	}
	for _, key := range []string{"name", "type"} {
		if !hasKey(item, key) {
			y.errorf(item, path, "%s: required", key)
		}
	}
	if len(y.errs) > before {
		return p, false
	}
	if err := p.Check(); err != nil {
		y.errorf(item, path, "%v", err)
		return p, false
	}
	return p, true
}

func parseAttempts(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > maxProviderAttempts {
		return 0, fmt.Errorf("want a whole number from 1 (no retry) to %d (got %q)", maxProviderAttempts, s)
	}
	return n, nil
}

// parseContextTokens reads a provider's max_context_tokens, in the range
// a recipe's limits.max_context_tokens takes.
func parseContextTokens(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < recipes.MinContextTokens || n > recipes.MaxContextTokens {
		return 0, fmt.Errorf("want the models' context window in tokens, a whole number from %d to %d (got %q)",
			recipes.MinContextTokens, recipes.MaxContextTokens, s)
	}
	return n, nil
}
