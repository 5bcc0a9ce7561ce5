package recipes

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
)

// Library is a set of resolved, checked recipes by name: the built-in
// recipes, and those of a directory, which replace built-in recipes of the
// same name. A Library is immutable and safe for concurrent use.
type Library struct {
	recipes map[string]*Recipe
}

// Builtin returns the built-in recipes embedded in the binary. It panics if
// one of them is invalid, which the package's tests rule out.
func Builtin() *Library {
	l := newLoader()
	lib, errs := l.library(l.builtin)
	if len(errs) > 0 {
		panic("recipes: invalid built-in recipe: " + errs.Error())
	}
	return lib
}

// LoadDir returns the built-in recipes together with the recipes of dir
// (its *.yaml files, not its subdirectories). A recipe of dir replaces the
// built-in recipe of the same name, and may extend it. The error is Errors,
// with every problem of every file.
func LoadDir(dir string) (*Library, error) {
	l := newLoader()
	lib, errs := l.library(l.builtin)
	if len(errs) > 0 {
		return nil, errs.normalize()
	}
	info, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("recipes: %w", err)
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("recipes: %s is not a directory", dir)
	}
	own, errs := l.library(l.dir(filepath.Clean(dir)))
	if len(errs) > 0 {
		return nil, errs.normalize()
	}
	maps.Copy(lib.recipes, own.recipes)
	return lib, nil
}

// library loads every recipe of src.
func (l *loader) library(src *source) (*Library, Errors) {
	lib := &Library{recipes: make(map[string]*Recipe)}
	var errs Errors
	for _, name := range src.names() {
		r, es := l.recipe(l.open(src, name))
		errs = append(errs, es...)
		if r != nil {
			lib.recipes[name] = r
		}
	}
	return lib, errs
}

// Get returns a copy of the recipe called name, or an error wrapping
// ErrNotFound.
func (lib *Library) Get(name string) (*Recipe, error) {
	r, ok := lib.recipes[name]
	if !ok {
		names := lib.Names()
		hint := didYouMean(name, names)
		if hint == "" {
			hint = "; the recipes are " + backquoted(names)
		}
		return nil, fmt.Errorf("%w: %q%s", ErrNotFound, name, hint)
	}
	return r.Clone(), nil
}

// Names returns the names of the library's recipes, sorted.
func (lib *Library) Names() []string {
	return slices.Sorted(maps.Keys(lib.recipes))
}

// Parse reads one recipe from data; file names it in messages. Its extends
// is looked up among the built-in recipes. Unlike files of a directory, the
// recipe's name need not match file. The error is Errors.
func Parse(file string, data []byte) (*Recipe, error) {
	l := newLoader()
	e := l.parse(file, "", nil, data)
	r, errs := l.recipe(e)
	if len(errs) > 0 {
		return nil, errs.normalize()
	}
	return r, nil
}

// Lint checks the recipe files at paths as loading them would, each with
// its parents (NAME.yaml next to it, then the built-in recipes), and
// returns every problem of every file, sorted by file and position. A
// problem in a parent is reported once, at the parent's file. engines are
// the engine kinds a recipe may name (a registry's: engines.Registry.Names).
func Lint(engines []string, paths ...string) Errors {
	return Linter{Engines: engines}.Lint(paths...)
}

// Linter checks recipe files with what the engines know: which kinds there
// are, and what each kind's contract needs. The engines package fills it
// from a registry (engines.Registry.Linter); this package cannot ask the
// engines itself, which build on it.
type Linter struct {
	// Engines are the engine kinds a recipe may name; nil: any name of
	// the right form.
	Engines []string
	// Ending returns the tool that ends the turns of a recipe ("" when
	// the model's free text does), which a contract.text replacing the
	// engine's must name; nil: not checked.
	Ending func(*Recipe) string
}

// Lint checks the recipe files at paths as the package's Lint does.
func (lt Linter) Lint(paths ...string) Errors {
	l := newLoader()
	l.engines, l.ending = lt.Engines, lt.Ending
	var errs Errors
	for _, p := range paths {
		_, es := l.recipe(l.openPath(p))
		errs = append(errs, es...)
	}
	return errs.normalize()
}
