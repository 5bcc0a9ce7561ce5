package providers

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"unicode"

	"github.com/engine-brain/brain/llm/anthropic"
	"github.com/engine-brain/brain/llm/gemini"
	"github.com/engine-brain/brain/llm/openai"
	"github.com/engine-brain/brain/recipes"
)

// The provider types. TypeOpenAI is OpenAI's API and the servers that
// speak its Chat Completions protocol (Ollama, vLLM, llama.cpp's server,
// LM Studio); TypeAnthropic is Anthropic's Messages API; TypeGemini is
// Google's Gemini API. Each is also the name of the provider its
// environment variables configure (FromEnv).
const (
	TypeOpenAI    = "openai"
	TypeAnthropic = "anthropic"
	TypeGemini    = "gemini"
)

// Config is one model provider of the server: an entry of brain.yaml's
// providers, or one that the environment configures (FromEnv).
type Config struct {
	Name string
	Type string // TypeOpenAI, TypeAnthropic or TypeGemini
	// BaseURL is the root of the API, version path included for openai
	// (left out for anthropic and gemini, whose clients add it); "" means
	// the type's own API (https://api.openai.com/v1).
	BaseURL string
	// APIKeyEnv names the variable the key was read from; "" for none.
	APIKeyEnv string
	// APIKey is the key, read from APIKeyEnv when the configuration loads.
	APIKey Secret
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

// Secret is a string that fmt and zap print as [redacted], so that an API
// key in a struct cannot leak through a %v or a log field.
type Secret string

func (Secret) String() string   { return "[redacted]" }
func (Secret) GoString() string { return `"[redacted]"` }

var (
	nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)
	// envNameRE takes upper-case names only: a value that is not one is
	// never echoed, since it may be a key written where its name belongs.
	envNameRE = regexp.MustCompile(`^[A-Z_][A-Z0-9_]{0,63}$`)
)

// Check checks p as New takes it: each field (name, type, base_url,
// max_context_tokens; messages begin with the field's name), then what
// needs more than one field, then that the adapter takes p (max_attempts
// and the key included): a server would otherwise refuse to start on it.
// Messages never show the key.
func (p Config) Check() error {
	if err := p.checkFields(); err != nil {
		return err
	}
	if p.Type == TypeOpenAI && p.BaseURL == "" && p.APIKey == "" {
		return errors.New("base_url: required for an OpenAI-compatible server, such as http://127.0.0.1:11434/v1; only OpenAI's own API goes without it, and that needs api_key_env")
	}
	_, err := p.newModel("", nil, nil)
	return err
}

// checkFields checks each field of p that a check of its own covers. A
// configuration file checks them as it reads them, where it can say where
// a value is wrong: this is for the Configs a program builds.
func (p Config) checkFields() error {
	var errs []error
	field := func(name string, err error) {
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
	}
	if p.Name == "" {
		field("name", errors.New("required"))
	} else {
		field("name", CheckName(p.Name))
	}
	if p.Type == "" {
		field("type", errors.New("required"))
	} else {
		field("type", CheckType(p.Type))
	}
	if p.BaseURL != "" {
		field("base_url", CheckBaseURL(p.BaseURL))
	}
	if n := p.MaxContextTokens; n != 0 && (n < recipes.MinContextTokens || n > recipes.MaxContextTokens) {
		field("max_context_tokens", fmt.Errorf("want the models' context window in tokens, a whole number from %d to %d, or 0 for the recipes' default (got %d)",
			recipes.MinContextTokens, recipes.MaxContextTokens, n))
	}
	return errors.Join(errs...)
}

// CheckName checks the name of a provider.
func CheckName(s string) error {
	switch {
	case s == recipes.DefaultProvider:
		return fmt.Errorf("%q is reserved: recipes name it for the first provider of the list; pick another name", s)
	case !nameRE.MatchString(s):
		return fmt.Errorf("want lowercase letters, digits, - and _, starting with a letter or digit, at most 64 (got %q)", s)
	}
	return nil
}

// CheckType checks the type of a provider.
func CheckType(s string) error {
	switch s {
	case TypeOpenAI, TypeAnthropic, TypeGemini:
		return nil
	}
	return fmt.Errorf("unknown provider type %q; want openai (OpenAI, or any server that speaks its Chat Completions API: Ollama, vLLM, llama.cpp, LM Studio), anthropic or gemini", s)
}

// CheckBaseURL checks the root URL of a provider's API. Messages show the
// URL without its password, or not at all when it does not parse.
func CheckBaseURL(v string) error {
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

// ReadKey reads the API key from the variable name. Errors name the
// variable, never its value.
func ReadKey(name string, lookupEnv func(string) (string, bool)) (Secret, error) {
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
	return Secret(v), nil
}

// endpoint returns the base URL p reaches, for logs: without a password.
func (p Config) endpoint() string {
	if p.BaseURL != "" {
		return redactURL(p.BaseURL)
	}
	switch p.Type {
	case TypeAnthropic:
		return anthropic.DefaultBaseURL
	case TypeGemini:
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
