package providers

import (
	"errors"
	"fmt"
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
	{TypeOpenAI, envOpenAIKey, envOpenAIBaseURL},
	{TypeAnthropic, envAnthropicKey, envAnthropicBaseURL},
	{TypeGemini, envGeminiKey, envGeminiBaseURL},
}

// FromEnv returns the providers that OPENAI_*, ANTHROPIC_* and GEMINI_*
// configure (OPENAI_API_KEY and OPENAI_BASE_URL, and the same of the
// others), in that order, each named after its type. A base URL alone is a
// server that needs no key (which only openai's adapter accepts).
func FromEnv(lookupEnv func(string) (string, bool)) ([]Config, error) {
	var out []Config
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
func envProvider(typ, keyEnv, baseEnv string, lookupEnv func(string) (string, bool)) (Config, bool, error) {
	key, _ := lookupEnv(keyEnv)
	base, _ := lookupEnv(baseEnv)
	if key == "" && base == "" {
		return Config{}, false, nil
	}
	p := Config{Name: typ, Type: typ, BaseURL: base}
	var errs []error
	if base != "" {
		if err := CheckBaseURL(base); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", baseEnv, err))
		}
	}
	if key != "" {
		p.APIKeyEnv = keyEnv
		var err error
		if p.APIKey, err = ReadKey(keyEnv, lookupEnv); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return Config{}, false, err
	}
	if err := p.Check(); err != nil {
		return Config{}, false, fmt.Errorf("%s, %s: %w", keyEnv, baseEnv, err)
	}
	return p, true, nil
}
