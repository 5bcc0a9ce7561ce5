package brain

import (
	"context"
	"sync"

	"github.com/engine-brain/brain/engines/chat"
	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/tools"
)

// library is a set of recipes with their tool registries, each built once
// on first use: compiling the schemas costs far more than a turn, and
// listing an MCP server's tools means starting it. A registry built while
// an MCP server was unavailable is not kept: the next turn builds it again
// (the pool bounds how often it tries the server).
type library struct {
	recipes *recipes.Library
	builder chat.ToolBuilder
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

func newLibrary(r *recipes.Library, b chat.ToolBuilder) *library {
	return &library{recipes: r, builder: b, byName: make(map[string]*built)}
}

// tools returns recipe r's registry. Turns of one recipe wait for one
// build; other recipes' turns do not wait for it (an MCP server may take a
// while to start).
func (l *library) tools(r *recipes.Recipe) (*tools.Registry, error) {
	l.mu.Lock()
	if b, ok := l.byName[r.Name]; ok {
		l.mu.Unlock()
		<-b.done
		return b.reg, b.err
	}
	b := &built{done: make(chan struct{})}
	l.byName[r.Name] = b
	l.mu.Unlock()

	// Bounded by the MCP pool's connect timeout; not cancelled with one
	// turn, since other turns may wait for it.
	reg, complete, err := l.builder.Build(context.Background(), r)
	b.reg, b.err = reg, err
	close(b.done)
	if err != nil || !complete {
		l.mu.Lock()
		if l.byName[r.Name] == b {
			delete(l.byName, r.Name)
		}
		l.mu.Unlock()
	}
	return reg, err
}
