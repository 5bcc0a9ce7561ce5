package main

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"go.yaml.in/yaml/v3"

	"github.com/engine-brain/brain/llm/anthropic"
	"github.com/engine-brain/brain/llm/gemini"
	"github.com/engine-brain/brain/llm/openai"
	"github.com/engine-brain/brain/recipes"
)

// The provider types. providerOpenAI is OpenAI's API and the servers that
// speak its Chat Completions protocol (Ollama, vLLM, llama.cpp's server,
// LM Studio); providerAnthropic is Anthropic's Messages API;
// providerGemini is Google's Gemini API. Each is also the name of the
// provider its environment variables configure.
const (
	providerOpenAI    = "openai"
	providerAnthropic = "anthropic"
	providerGemini    = "gemini"
)

// The environment variables that configure a provider of each type when the
// configuration lists no providers.
const (
	envOpenAIKey        = "OPENAI_API_KEY"
	envOpenAIBaseURL    = "OPENAI_BASE_URL"
	envAnthropicKey     = "ANTHROPIC_API_KEY"
	envAnthropicBaseURL = "ANTHROPIC_BASE_URL"
	envGeminiKey        = "GEMINI_API_KEY"
	envGeminiBaseURL    = "GEMINI_BASE_URL"
)

// envProviders are the providers the environment can configure, in the
// order they become "default" (the first configured one).
var envProviders = []struct{ typ, keyEnv, baseEnv string }{
	{providerOpenAI, envOpenAIKey, envOpenAIBaseURL},
	{providerAnthropic, envAnthropicKey, envAnthropicBaseURL},
	{providerGemini, envGeminiKey, envGeminiBaseURL},
}

// maxProviderAttempts bounds max_attempts, as llm/openai does.
const maxProviderAttempts = 20

// providerConfig is one model provider of the server: an entry of
// brain.yaml's providers, or the one the OPENAI_* variables configure.
type providerConfig struct {
	Name string
	Type string // providerOpenAI, providerAnthropic or providerGemini
	// BaseURL is the root of the API, version path included for openai
	// (left out for anthropic and gemini, whose clients add it); "" means
	// the type's own API (https://api.openai.com/v1).
	BaseURL string
	// APIKeyEnv names the variable the key was read from; "" for none.
	APIKeyEnv string
	// APIKey is the key, read from APIKeyEnv when the configuration loads.
	APIKey secret
	// Model is the model of recipes that name none; "" for none.
	Model string
	// MaxAttempts bounds the attempts of one model call; 0 means the
	// adapter's default.
	MaxAttempts int
	// MaxContextTokens is the context window of the provider's models
	// (llm.Windowed), for recipes that set no limits.max_context_tokens;
	// 0 leaves them the recipes' default.
	MaxContextTokens int
}

// secret is a string that fmt and zap print as [redacted], so that an API
// key in a struct cannot leak through a %v or a log field.
type secret string

func (secret) String() string   { return "[redacted]" }
func (secret) GoString() string { return `"[redacted]"` }

// providerFields are the keys of a providers entry.
var providerFields = []string{"name", "type", "base_url", "api_key_env", "model", "max_attempts", "max_context_tokens"}

var (
	providerNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)
	// envNameRE takes upper-case names only: a value that is not one is
	// never echoed, since it may be a key written where its name belongs.
	envNameRE = regexp.MustCompile(`^[A-Z_][A-Z0-9_]{0,63}$`)
)

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
func (y *yamlFile) provider(item *yaml.Node, path string, i int, names map[string]int) (providerConfig, bool) {
	before := len(y.errs)
	var p providerConfig
	y.mapping(item, path, providerFields, func(key string, v *yaml.Node) {
		s, ok := y.scalar(v, path+"."+key, false)
		if !ok {
			return
		}
		var err error
		switch key {
		case "name":
			err = checkProviderName(s)
			if j, dup := names[s]; dup && err == nil {
				err = fmt.Errorf("%q is already the name of providers[%d]; names must be unique", s, j)
			}
			names[s], p.Name = i, s
		case "type":
			err = checkProviderType(s)
			p.Type = s
		case "base_url":
			err = checkBaseURL(s)
			p.BaseURL = s
		case "api_key_env":
			p.APIKeyEnv = s
			p.APIKey, err = readKey(s, y.env)
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
	if err := p.check(); err != nil {
		y.errorf(item, path, "%v", err)
		return p, false
	}
	return p, true
}

// check checks what needs more than one field of p, and that the adapter
// takes p: a server would otherwise refuse to start on it.
func (p providerConfig) check() error {
	if p.Type == providerOpenAI && p.BaseURL == "" && p.APIKeyEnv == "" {
		return errors.New("base_url: required for an OpenAI-compatible server, such as http://127.0.0.1:11434/v1; only OpenAI's own API goes without it, and that needs api_key_env")
	}
	_, err := p.newModel("", nil)
	return err
}

// fromEnv returns the providers that OPENAI_*, ANTHROPIC_* and GEMINI_*
// configure, in the order of envProviders. A base URL alone is a server
// that needs no key (which only openai's adapter accepts).
func fromEnv(lookupEnv func(string) (string, bool)) ([]providerConfig, error) {
	var out []providerConfig
	var errs []error
	for _, e := range envProviders {
		p, ok, err := envProvider(e.typ, e.keyEnv, e.baseEnv, lookupEnv)
		if err != nil {
			errs = append(errs, err)
		} else if ok {
			out = append(out, p)
		}
	}
	return out, errors.Join(errs...)
}

// envProvider returns the provider of type typ that its key and base URL
// variables configure, or false when neither is set.
func envProvider(typ, keyEnv, baseEnv string, lookupEnv func(string) (string, bool)) (providerConfig, bool, error) {
	key, _ := lookupEnv(keyEnv)
	base, _ := lookupEnv(baseEnv)
	if key == "" && base == "" {
		return providerConfig{}, false, nil
	}
	p := providerConfig{Name: typ, Type: typ, BaseURL: base}
	var errs []error
	if base != "" {
		if err := checkBaseURL(base); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", baseEnv, err))
		}
	}
	if key != "" {
		p.APIKeyEnv = keyEnv
		var err error
		if p.APIKey, err = readKey(keyEnv, lookupEnv); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return providerConfig{}, false, err
	}
	if err := p.check(); err != nil {
		return providerConfig{}, false, fmt.Errorf("%s, %s: %w", keyEnv, baseEnv, err)
	}
	return p, true, nil
}

func checkProviderName(s string) error {
	switch {
	case s == recipes.DefaultProvider:
		return fmt.Errorf("%q is reserved: recipes name it for the first provider of the list; pick another name", s)
	case !providerNameRE.MatchString(s):
		return fmt.Errorf("want lowercase letters, digits, - and _, starting with a letter or digit, at most 64 (got %q)", s)
	}
	return nil
}

func checkProviderType(s string) error {
	switch s {
	case providerOpenAI, providerAnthropic, providerGemini:
		return nil
	}
	return fmt.Errorf("unknown provider type %q; want openai (OpenAI, or any server that speaks its Chat Completions API: Ollama, vLLM, llama.cpp, LM Studio), anthropic or gemini", s)
}

// checkBaseURL checks the root URL of a provider's API. Messages show the
// URL without its password, or not at all when it does not parse.
func checkBaseURL(v string) error {
	u, err := url.Parse(v)
	if err != nil {
		return errors.New("not a valid URL; want an absolute http or https URL such as http://127.0.0.1:11434/v1")
	}
	switch {
	case (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return fmt.Errorf("want an absolute http or https URL such as http://127.0.0.1:11434/v1 (got %q)", u.Redacted())
	case u.User != nil:
		return errors.New("must not hold a user or password; export the key in an environment variable and name it in api_key_env")
	case u.RawQuery != "" || u.Fragment != "":
		return fmt.Errorf("must have no query or fragment (got %q)", u.Redacted())
	}
	return nil
}

// readKey reads the API key from the variable name. Errors name the
// variable, never its value.
func readKey(name string, lookupEnv func(string) (string, bool)) (secret, error) {
	if !envNameRE.MatchString(name) {
		return "", errors.New("want the name of the environment variable that holds the key, in upper case, such as OPENAI_API_KEY; the key itself never goes in the file")
	}
	v, _ := lookupEnv(name)
	switch {
	case v == "":
		return "", fmt.Errorf("$%s is not set or is empty; export the key in it, or leave api_key_env out for a server that needs no key", name)
	case strings.IndexFunc(v, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0:
		return "", fmt.Errorf("$%s holds white space or control characters (a trailing newline from a file?)", name)
	}
	return secret(v), nil
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

// endpoint returns the base URL p reaches, for logs: without a password.
func (p providerConfig) endpoint() string {
	if p.BaseURL != "" {
		return redactURL(p.BaseURL)
	}
	switch p.Type {
	case providerAnthropic:
		return anthropic.DefaultBaseURL
	case providerGemini:
		return gemini.DefaultBaseURL
	}
	return openai.DefaultBaseURL
}

// redactURL returns u without its password.
func redactURL(u string) string {
	parsed, err := url.Parse(u)
	if err != nil {
		return "(invalid URL)"
	}
	return parsed.Redacted()
}
