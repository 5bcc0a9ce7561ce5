package brain

import (
	"sync"

	"github.com/engine-brain/brain/engines/chat"
	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/tools"
)

// toolCache builds each recipe's tool registry once: compiling the schemas
// costs far more than a turn.
type toolCache struct {
	catalog tools.Catalog
	mu      sync.Mutex
	byName  map[string]*tools.Registry
}

func newToolCache(c tools.Catalog) *toolCache {
	return &toolCache{catalog: c, byName: make(map[string]*tools.Registry)}
}

func (c *toolCache) get(r *recipes.Recipe) (*tools.Registry, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if reg, ok := c.byName[r.Name]; ok {
		return reg, nil
	}
	reg, err := chat.BuildTools(c.catalog, r)
	if err != nil {
		return nil, err
	}
	c.byName[r.Name] = reg
	return reg, nil
}
