package api

import (
	"errors"
	"net/http"

	"github.com/engine-brain/brain/recipes"
)

func (s *Server) listRecipes(w http.ResponseWriter, r *http.Request, _ identity) error {
	s.writeJSON(w, r, http.StatusOK, recipeList(s.cfg.Backend.Recipes()))
	return nil
}

// getRecipe serves a recipe as the node runs it: resolved, its extends
// merged in. Users do not see tool settings nor MCP server commands and
// environments, which can hold credentials.
func (s *Server) getRecipe(w http.ResponseWriter, r *http.Request, id identity) error {
	rec, err := s.cfg.Backend.Recipes().Get(r.PathValue("name"))
	if errors.Is(err, recipes.ErrNotFound) {
		return errorf(http.StatusNotFound, CodeNotFound, "%v", err)
	}
	if err != nil {
		return err
	}
	if id.role == RoleUser {
		redact(rec)
	}
	s.writeJSON(w, r, http.StatusOK, rec)
	return nil
}

// redact removes from a recipe (a copy) what only operators may read.
func redact(rec *recipes.Recipe) {
	for i := range rec.Tools {
		rec.Tools[i].Config = nil
	}
	for i := range rec.MCPServers {
		rec.MCPServers[i].Command, rec.MCPServers[i].Args, rec.MCPServers[i].Env = "", nil, nil
	}
}

// reloadRecipes reloads the recipes (Config.Reload) and lists the new set.
// Recipe files with problems are a 422 naming each problem.
func (s *Server) reloadRecipes(w http.ResponseWriter, r *http.Request, _ identity) error {
	if s.cfg.Reload == nil {
		return errorf(http.StatusNotImplemented, CodeNotImplemented, "this server cannot reload its recipes")
	}
	if err := s.cfg.Reload(r.Context()); err != nil {
		var problems recipes.Errors
		if errors.As(err, &problems) {
			return errorf(http.StatusUnprocessableEntity, CodeInvalidRecipes, "the recipes were not reloaded:\n%v", problems)
		}
		return err
	}
	s.writeJSON(w, r, http.StatusOK, recipeList(s.cfg.Backend.Recipes()))
	return nil
}
