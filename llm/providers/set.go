package providers

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"go.uber.org/zap"

	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/llm/anthropic"
	"github.com/engine-brain/brain/llm/gemini"
	"github.com/engine-brain/brain/llm/openai"
	"github.com/engine-brain/brain/llm/provider"
	"github.com/engine-brain/brain/recipes"
)

// Set resolves the model sections of recipes to clients of the configured
// providers; its Resolve is the node's brain.ModelResolver.
//
//   - provider "default" (or none) is the first configured provider;
//   - a configured name is that provider;
//   - "openai" with a base_url, when no provider has that name, is an
//     OpenAI-compatible server reached without a key;
//   - with no provider configured, every other recipe gets the fallback
//     model (Options.Fallback), whatever provider it names;
//   - any other name is an error.
//
// A recipe's base_url replaces the provider's, with the provider's other
// settings, its key included. Clients are built once per provider and base
// URL and then shared: they are immutable and safe for concurrent use.
type Set struct {
	providers []Config  // the first is the default
	fallback  llm.Model // set when providers is empty
	log       *zap.Logger
	http      *http.Client // the clients' (tracedClient)

	mu      sync.Mutex
	clients map[clientKey]llm.Model
}

// Options are the settings of a Set besides its providers.
type Options struct {
	// Fallback is the model every recipe gets when no provider is
	// configured (brain serve's scripted demo model); it is not used when
	// there is one.
	Fallback llm.Model
	// Logger logs each provider and each client built for a recipe's
	// base_url, and is the adapters' logger; nil logs nothing.
	Logger *zap.Logger
}

// clientKey names a client: a provider, and the base URL a recipe gave
// ("" for the provider's own).
type clientKey struct{ provider, baseURL string }

// New builds the clients of providers, whose first is the default, and
// logs each provider's name, type and base URL (never its key). It refuses
// a provider that Config.Check refuses, and two of the same name.
func New(providers []Config, opts Options) (*Set, error) {
	if err := checkAll(providers); err != nil {
		return nil, err
	}
	s := &Set{providers: slices.Clone(providers), log: opts.Logger, http: tracedClient(), clients: map[clientKey]llm.Model{}}
	if s.log == nil {
		s.log = zap.NewNop()
	}
	if len(providers) == 0 {
		s.fallback = opts.Fallback
		return s, nil
	}
	for i, p := range s.providers {
		if _, err := s.client(p, ""); err != nil {
			return nil, err // checked by checkAll: never
		}
		s.log.Info("model provider",
			zap.String("provider", p.Name),
			zap.String("type", p.Type),
			zap.String("base_url", p.endpoint()),
			zap.Bool("default", i == 0))
	}
	return s, nil
}

// checkAll checks each of providers, and that no two share a name.
func checkAll(providers []Config) error {
	var errs []error
	names := map[string]int{} // name → index of its provider
	for i, p := range providers {
		if err := p.Check(); err != nil {
			errs = append(errs, fmt.Errorf("providers[%d]: %w", i, err))
			continue
		}
		if j, dup := names[p.Name]; dup {
			errs = append(errs, fmt.Errorf("providers[%d].name: %q is already the name of providers[%d]; names must be unique", i, p.Name, j))
			continue
		}
		names[p.Name] = i
	}
	return errors.Join(errs...)
}

// Resolve returns the model of a recipe whose model section is m.
func (s *Set) Resolve(m recipes.Model) (llm.Model, error) {
	p, ok := s.lookup(m.Provider)
	switch {
	case ok:
	case m.Provider == TypeOpenAI && m.BaseURL != "":
		p = Config{Name: TypeOpenAI, Type: TypeOpenAI}
	case s.fallback != nil:
		return s.fallback, nil
	default:
		names := make([]string, len(s.providers))
		for i, p := range s.providers {
			names[i] = p.Name
		}
		has := strings.Join(names, ", ")
		if has == "" {
			has = "none" // and no fallback
		}
		return nil, fmt.Errorf("no model provider named %q; this server has %s (brain.yaml providers; a new one needs a restart)",
			m.Provider, has)
	}
	return s.client(p, m.BaseURL)
}

// lookup finds a configured provider by the name a recipe gives.
func (s *Set) lookup(name string) (Config, bool) {
	if len(s.providers) == 0 {
		return Config{}, false
	}
	if name == "" || name == recipes.DefaultProvider {
		return s.providers[0], true
	}
	for _, p := range s.providers {
		if p.Name == name {
			return p, true
		}
	}
	return Config{}, false
}

// client returns the client of p at baseURL ("" for p's own), building it
// on first use.
func (s *Set) client(p Config, baseURL string) (llm.Model, error) {
	if baseURL == p.BaseURL {
		baseURL = ""
	}
	key := clientKey{p.Name, baseURL}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.clients[key]; ok {
		return c, nil
	}
	c, err := p.newModel(baseURL, s.log, s.http)
	if err != nil {
		return nil, err
	}
	s.clients[key] = c
	if baseURL != "" {
		s.log.Info("model client for a recipe's base_url",
			zap.String("provider", p.Name),
			zap.String("type", p.Type),
			zap.String("base_url", redactURL(baseURL)))
	}
	return c, nil
}

// newModel builds a client of p, at baseURL when it is set, sending with
// hc (nil: the adapter's own client). log may be nil.
func (p Config) newModel(baseURL string, log *zap.Logger, hc *http.Client) (llm.Model, error) {
	if baseURL == "" {
		baseURL = p.BaseURL
	}
	var m llm.Model
	var err error
	opts := provider.Options{MaxAttempts: p.MaxAttempts, Logger: log, HTTPClient: hc}
	switch p.Type {
	case TypeOpenAI:
		m, err = openai.New(openai.Config{APIKey: string(p.APIKey), BaseURL: baseURL, Model: p.Model, Options: opts})
	case TypeAnthropic:
		m, err = anthropic.New(anthropic.Config{APIKey: string(p.APIKey), BaseURL: baseURL, Model: p.Model, Options: opts})
	case TypeGemini:
		m, err = gemini.New(gemini.Config{APIKey: string(p.APIKey), BaseURL: baseURL, Model: p.Model, Options: opts})
	default:
		err = fmt.Errorf("unknown type %q", p.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("provider %s: %w", p.Name, err)
	}
	// Its usage names p (not "default", which recipes may call it) and
	// the model p's default is when a recipe names none.
	m = llm.Answering(p.Name, p.Model, m)
	if p.MaxContextTokens > 0 {
		m = llm.WithContextTokens(m, p.MaxContextTokens)
	}
	return m, nil
}

// Check resolves the model of every recipe of lib, so that a recipe naming
// an unknown provider is refused when the recipes load, not when its turns
// run.
func (s *Set) Check(lib *recipes.Library) error {
	var errs []error
	for _, name := range lib.Names() {
		r, err := lib.Get(name)
		if err != nil {
			continue // listed by Names: never
		}
		if _, err := s.Resolve(r.Model); err != nil {
			errs = append(errs, fmt.Errorf("recipe %s: model: %w", name, err))
		}
	}
	return errors.Join(errs...)
}
