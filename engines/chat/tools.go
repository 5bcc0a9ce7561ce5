package chat

import (
	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/tools"
)

// BuildTools builds the tool registry of recipe r's tool pool from catalog.
func BuildTools(catalog tools.Catalog, r *recipes.Recipe) (*tools.Registry, error) {
	refs := make([]tools.Ref, len(r.Tools))
	for i, ref := range r.Tools {
		refs[i] = tools.Ref{Name: ref.Name, Config: ref.Config}
	}
	return catalog.Build(refs)
}
