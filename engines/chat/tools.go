package chat

import (
	"maps"

	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/tools"
)

// BuildTools builds the tool registry of recipe r's tool pool from catalog.
// present_results gets the recipe's presentation.links as its config
// ({links: {name: template}}), unless its entry in the pool has a config of
// its own.
func BuildTools(catalog tools.Catalog, r *recipes.Recipe) (*tools.Registry, error) {
	refs := make([]tools.Ref, len(r.Tools))
	for i, ref := range r.Tools {
		refs[i] = tools.Ref{Name: ref.Name, Config: ref.Config}
		if ref.Name == tools.PresentResults && len(ref.Config) == 0 && len(r.Presentation.Links) > 0 {
			refs[i].Config = map[string]any{"links": maps.Clone(r.Presentation.Links)}
		}
	}
	return catalog.Build(refs)
}
