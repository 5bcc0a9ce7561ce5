package brain

import (
	"sync"

	"github.com/engine-brain/brain/engines/chat"
	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/tools"
)

// library is a set of recipes with their tool registries, each built once
// on first use: compiling the schemas costs far more than a turn.
type library struct {
	recipes *recipes.Library
	catalog tools.Catalog
	mu      sync.Mutex
	byName  map[string]*tools.Registry
}

func newLibrary(r *recipes.Library, c tools.Catalog) *library {
	return &library{recipes: r, catalog: c, byName: make(map[string]*tools.Registry)}
}

func (l *library) tools(r *recipes.Recipe) (*tools.Registry, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if reg, ok := l.byName[r.Name]; ok {
		return reg, nil
	}
	reg, err := chat.BuildTools(l.catalog, r)
	if err != nil {
		return nil, err
	}
	l.byName[r.Name] = reg
	return reg, nil
}
