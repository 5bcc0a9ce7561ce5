package toolset

import (
	"context"
	"sync"

	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/tools"
)

// Cache holds the tool registries of a set of recipes, each built once on
// first use: compiling the schemas costs far more than a turn, and listing
// an MCP server's tools means starting it. A registry built while an MCP
// server was unavailable is not kept: the next turn builds it again (the
// pool bounds how often it tries the server). A Cache belongs to one set of
// recipes (registries are kept by recipe name): a reload makes a new one.
type Cache struct {
	builder Builder
	mu      sync.Mutex
	byName  map[string]*built
}

// built is a recipe's registry, or the build in progress: done closes when
// reg and err are set.
type built struct {
	done chan struct{}
	reg  *tools.Registry
	err  error
}

// NewCache returns an empty cache whose registries b builds.
func NewCache(b Builder) *Cache {
	return &Cache{builder: b, byName: make(map[string]*built)}
}

// Tools returns recipe r's registry. Turns of one recipe wait for one
// build; other recipes' turns do not wait for it (an MCP server may take a
// while to start).
func (c *Cache) Tools(r *recipes.Recipe) (*tools.Registry, error) {
	c.mu.Lock()
	if b, ok := c.byName[r.Name]; ok {
		c.mu.Unlock()
		<-b.done
		return b.reg, b.err
	}
	b := &built{done: make(chan struct{})}
	c.byName[r.Name] = b
	c.mu.Unlock()

	// Bounded by the MCP pool's connect timeout; not cancelled with one
	// turn, since other turns may wait for it.
	reg, complete, err := c.builder.Build(context.Background(), r)
	b.reg, b.err = reg, err
	close(b.done)
	if err != nil || !complete {
		c.mu.Lock()
		if c.byName[r.Name] == b {
			delete(c.byName, r.Name)
		}
		c.mu.Unlock()
	}
	return reg, err
}
