package recipes

import (
	"fmt"
	"slices"
)

// EngineZaphod asks several heads (models or prompt variants) the same
// thing concurrently and composes their answers into one reply with a
// synthesis call that ends with respond.
const EngineZaphod Engine = "zaphod"

// The range of a zaphod recipe's heads.
const (
	MinHeads = 2
	MaxHeads = 8
)

// Head is one of the heads of a zaphod recipe: a model and/or a system
// prompt that answers the turn's question on its own.
type Head struct {
	Name         string   `yaml:"name" json:"name" jsonschema:"required,minLength=1,maxLength=64,pattern=^[a-z0-9][a-z0-9_-]*$" jsonschema_description:"Name of the head, unique in the recipe: the log names each head's answer by it, and the synthesis is shown it."`
	Model        Model    `yaml:"model,omitempty" json:"model,omitzero" jsonschema_description:"The head's model, as the recipe's model section; the fields left out are the recipe's model's (a name alone asks another model of the same provider). Left out, the recipe's model."`
	SystemPrompt string   `yaml:"system_prompt,omitempty" json:"system_prompt,omitempty" jsonschema_description:"The head's system prompt; left out, the recipe's."`
	Timeout      Duration `yaml:"timeout,omitempty" json:"timeout,omitempty" jsonschema_description:"Longest wall-clock time of the head's answer, such as '30s': a head that takes longer is left out, as a failed head is, and the synthesis is told it timed out. Left out, the head has the turn's time (limits.turn_timeout)."`
}

// Synthesis is the call of a zaphod turn that composes the answer.
type Synthesis struct {
	Model        Model  `yaml:"model,omitempty" json:"model,omitzero" jsonschema_description:"The synthesis's model, as the recipe's model section; the fields left out are the recipe's model's. Left out, the recipe's model."`
	SystemPrompt string `yaml:"system_prompt,omitempty" json:"system_prompt,omitempty" jsonschema:"minLength=1" jsonschema_description:"The synthesis's system prompt: how to weigh the heads' answers, and the respond convention. The heads' answers are appended to it. Left out, the recipe's."`
}

// Over returns m completed by base: each field m leaves out is base's, and
// a provider of its own brings its own base_url and fallbacks.
func (m Model) Over(base Model) Model {
	out := base.clone()
	if m.Provider != "" {
		out.Provider, out.BaseURL, out.Fallbacks = m.Provider, m.BaseURL, slices.Clone(m.Fallbacks)
	} else if m.BaseURL != "" {
		out.BaseURL = m.BaseURL
	}
	if m.Name != "" {
		out.Name = m.Name
	}
	if m.Temperature != nil {
		out.Temperature = clonePtr(m.Temperature)
	}
	if m.MaxTokens != nil {
		out.MaxTokens = clonePtr(m.MaxTokens)
	}
	if m.HostedTools != nil {
		out.HostedTools = slices.Clone(m.HostedTools)
	}
	if m.Fallbacks != nil {
		out.Fallbacks = slices.Clone(m.Fallbacks)
	}
	return out
}

func (m Model) clone() Model {
	m.HostedTools = slices.Clone(m.HostedTools)
	m.Fallbacks = slices.Clone(m.Fallbacks)
	m.Temperature = clonePtr(m.Temperature)
	m.MaxTokens = clonePtr(m.MaxTokens)
	return m
}

func cloneHeads(hs []Head) []Head {
	if hs == nil {
		return nil
	}
	out := make([]Head, len(hs))
	for i, h := range hs {
		h.Model = h.Model.clone()
		out[i] = h
	}
	return out
}

// heads checks the heads and the synthesis: a zaphod recipe needs 2 to 8
// heads of distinct names and a synthesis; no other engine takes them.
func (c *checker) heads() {
	zaphod := c.r.EngineKind() == EngineZaphod
	hasSynthesis := c.find("synthesis") != nil
	if !zaphod {
		if c.r.Heads != nil {
			c.at(c.find("heads"), "heads", fmt.Sprintf("only a recipe of `engine: %s` asks heads; remove `heads`, or set `engine: %s`", EngineZaphod, EngineZaphod))
		}
		if hasSynthesis {
			c.at(c.find("synthesis"), "synthesis", fmt.Sprintf("only a recipe of `engine: %s` has a synthesis; remove `synthesis`, or set `engine: %s`", EngineZaphod, EngineZaphod))
		}
		return
	}
	if n := len(c.r.Heads); n < MinHeads || n > MaxHeads {
		c.at(c.nearest("heads"), "heads", fmt.Sprintf("a zaphod recipe asks %d to %d heads (got %d); list them as `heads: [{name: ..., system_prompt: ...}, ...]`", MinHeads, MaxHeads, n))
	}
	seen := make(map[string]int)
	for i, h := range c.r.Heads {
		path := joinIndex("heads", i)
		switch first, dup := seen[h.Name]; {
		case h.Name == "":
			c.at(c.find("heads", i), path+".name", "every head needs a name; add `name: ...`")
		case dup:
			c.at(c.find("heads", i, "name"), path+".name", fmt.Sprintf("head name %q is taken by heads[%d]; give each head its own name", h.Name, first))
		default:
			seen[h.Name] = i
		}
		if n := c.find("heads", i, "timeout"); n != nil && h.Timeout <= 0 {
			c.at(n, path+".timeout", "must be more than zero, such as `30s` or `2m`; leave it out for the turn's time")
		}
	}
	if !hasSynthesis {
		c.at(c.root, "synthesis", "a zaphod recipe needs a `synthesis` (the call that composes the heads' answers and ends with respond); add `synthesis: {system_prompt: ...}`")
	}
	if c.r.TurnEndMode() != TurnEndRespond {
		c.at(c.find("turn_end"), "turn_end", "a zaphod turn ends with the synthesis's `respond`; remove `turn_end` or set it to `respond`")
	}
}
