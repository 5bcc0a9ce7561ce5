package main

import (
	"context"
	"fmt"
	"sync"

	"go.uber.org/zap"

	"github.com/engine-brain/brain/llm/providers"
	"github.com/engine-brain/brain/recipes"
)

// recipeSetter is the part of brain.Node a reload needs.
type recipeSetter interface {
	SetRecipes(*recipes.Library)
}

// reloader reloads the recipes of a directory into a node: on SIGHUP, and
// when an admin asks through the API.
type reloader struct {
	dir    string // "" when only the built-in recipes are served
	models *providers.Set
	node   recipeSetter
	log    *zap.Logger
	mu     sync.Mutex // one reload at a time
}

// loadRecipes returns the built-in recipes, with those of dir when set.
func loadRecipes(dir string) (*recipes.Library, error) {
	if dir == "" {
		return recipes.Builtin(), nil
	}
	lib, err := recipes.LoadDir(dir)
	if err == nil {
		err = builtinEngines.Check(lib)
	}
	if err != nil {
		return nil, fmt.Errorf("recipes in %s:\n%w", dir, err)
	}
	return lib, nil
}

// Reload loads the recipes again and hands them to the node. On error the
// node keeps the recipes it has; the error is logged and returned.
func (r *reloader) Reload(_ context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.dir == "" {
		r.log.Info("recipes reload: no recipes directory (--recipes): the built-in recipes stay")
		return nil
	}
	lib, err := loadRecipes(r.dir)
	if err == nil {
		if err = r.models.Check(lib); err != nil {
			err = fmt.Errorf("recipes in %s:\n%w", r.dir, err)
		}
	}
	if err != nil {
		r.log.Error("recipes reload failed: keeping the current recipes", zap.Error(err))
		return err
	}
	r.node.SetRecipes(lib)
	r.log.Info("recipes reloaded", zap.String("dir", r.dir), zap.Strings("recipes", lib.Names()))
	return nil
}
