package api

import (
	"net/http"
	"strings"

	"github.com/engine-brain/brain/recipes"
)

// agentCardPath is where A2A clients look for an agent card, relative to
// an agent's base URL.
const agentCardPath = ".well-known/agent-card.json"

// a2aPublic reports whether path is an agent card, which clients fetch
// before they hold a token (it says which token to bring).
func a2aPublic(path string) bool {
	if path == "/"+agentCardPath {
		return true
	}
	rest, ok := strings.CutPrefix(path, "/a2a/")
	name, tail, _ := strings.Cut(rest, "/")
	return ok && name != "" && tail == agentCardPath
}

// agentCard serves the card of an exposed recipe.
func (s *Server) agentCard(w http.ResponseWriter, r *http.Request) {
	rec, err := s.exposed(r.PathValue("recipe"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusOK, s.cardOf(r, rec))
}

// agentCards serves the cards of every exposed recipe.
func (s *Server) agentCards(w http.ResponseWriter, r *http.Request) {
	lib := s.cfg.Backend.Recipes()
	list := agentCardList{Agents: []agentCard{}}
	for _, name := range lib.Names() {
		if rec, err := lib.Get(name); err == nil && rec.A2A.Expose {
			list.Agents = append(list.Agents, s.cardOf(r, rec))
		}
	}
	s.writeJSON(w, r, http.StatusOK, list)
}

// exposed returns the recipe name if it is exposed over A2A, else a 404
// that says how to expose it.
func (s *Server) exposed(name string) (*recipes.Recipe, error) {
	rec, err := s.cfg.Backend.Recipes().Get(name)
	if err != nil || !rec.A2A.Expose {
		return nil, errorf(http.StatusNotFound, CodeNotFound,
			"no A2A agent %q: no recipe of that name is exposed (a recipe opts in with `a2a: {expose: true}`); GET /.well-known/agent-card.json lists the agents", name)
	}
	return rec, nil
}

// cardOf builds the agent card of recipe rec, with URLs on the host r came
// to.
func (s *Server) cardOf(r *http.Request, rec *recipes.Recipe) agentCard {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	desc := rec.Description
	if desc == "" {
		desc = "brain recipe " + rec.Name
	}
	card := agentCard{
		Name: rec.Name, Description: desc, Version: "1.0.0",
		SupportedInterfaces: []agentInterface{{URL: scheme + "://" + r.Host + "/a2a/" + rec.Name,
			ProtocolBinding: "JSONRPC", ProtocolVersion: a2aVersion}},
		Capabilities:       agentCapabilities{Streaming: true},
		DefaultInputModes:  []string{"text/plain", "application/json"},
		DefaultOutputModes: []string{"text/plain", "text/markdown", "application/json"},
		Skills:             []agentSkill{},
	}
	for _, sk := range rec.A2A.Skills {
		tags := sk.Tags
		if tags == nil {
			tags = []string{}
		}
		card.Skills = append(card.Skills, agentSkill{ID: sk.ID, Name: sk.Name, Description: sk.Description, Tags: tags, Examples: sk.Examples})
	}
	if !s.tokens.Load().open {
		card.SecuritySchemes = map[string]any{"bearer": map[string]any{
			"httpAuthSecurityScheme": map[string]any{"scheme": "Bearer", "description": "a brain API token (role user or above)"}}}
		card.Security = []any{map[string]any{"schemes": map[string]any{"bearer": map[string]any{"list": []string{}}}}}
	}
	return card
}
