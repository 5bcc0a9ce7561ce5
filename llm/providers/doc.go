// Package providers turns the configuration of model providers into model
// clients: a Config names a provider, its type (openai, anthropic, gemini),
// its base URL, its key and its defaults; a Set built from a list of them
// resolves the model section of a recipe (recipes.Model) to an llm.Model of
// the adapters llm/openai, llm/anthropic and llm/gemini. Set.Resolve is a
// brain.ModelResolver.
//
// The package owns the rules of that resolution (which provider "default"
// is, what a recipe's base_url changes, when a server without a key is
// reached), the checks of a provider's settings and their messages, the
// reading of keys and of the OPENAI_*, ANTHROPIC_* and GEMINI_* variables
// (FromEnv), and the logs of the clients it builds, which never carry a
// key.
//
// It knows nothing of the node, Redis, the store or the HTTP API, nor of the
// configuration file: brain serve reads brain.yaml's providers into Configs,
// and passes the model that stands in when none is configured (the scripted
// demo model) as Options.Fallback.
package providers
