package recipes

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"go.yaml.in/yaml/v3"
)

// loader reads recipe files, resolves their parents and checks them. It
// reads each file once, so a parent shared by many recipes is parsed, and
// its problems reported, once.
type loader struct {
	builtin *source
	dirs    map[string]*source
	entries map[string]*entry     // by file as shown in messages
	origins map[*yaml.Node]string // the file every node comes from
	// engines are the engine kinds recipes may name; nil: any name of the
	// right form (a node checks its own registry).
	engines []string
	// ending returns the tool that ends the turns of a recipe, which a
	// contract.text must name (Linter.Ending); nil: not checked.
	ending func(*Recipe) string
}

// entry is one recipe file.
type entry struct {
	doc  *document
	errs Errors  // reading, parsing and schema problems of this file
	src  *source // where its parent is looked up first; nil: only among the built-ins
}

func newLoader() *loader {
	return &loader{
		builtin: builtinSource(),
		dirs:    make(map[string]*source),
		entries: make(map[string]*entry),
		origins: make(map[*yaml.Node]string),
	}
}

// dir returns the source of a directory on disk, one per directory.
func (l *loader) dir(dir string) *source {
	if s, ok := l.dirs[dir]; ok {
		return s
	}
	s := dirSource(dir)
	l.dirs[dir] = s
	return s
}

// open returns the entry of recipe name in src.
func (l *loader) open(src *source, name string) *entry {
	return l.openFile(src, src.file(name), name+".yaml")
}

// openPath returns the entry of the recipe file at path.
func (l *loader) openPath(path string) *entry {
	path = filepath.Clean(path)
	return l.openFile(l.dir(filepath.Dir(path)), path, filepath.Base(path))
}

func (l *loader) openFile(src *source, file, base string) *entry {
	if e, ok := l.entries[file]; ok {
		return e
	}
	var e *entry
	data, size, err := src.read(base)
	switch {
	case errors.Is(err, errTooLarge):
		e = &entry{doc: &document{file: file, stem: stem(base)}, errs: Errors{tooLarge(file, size)}}
	case errors.Is(err, fs.ErrNotExist):
		e = &entry{doc: &document{file: file, stem: stem(base)}, errs: Errors{{File: file, Message: "no such file"}}}
	case err != nil:
		e = &entry{doc: &document{file: file, stem: stem(base)}, errs: Errors{{File: file, Message: fmt.Sprintf("cannot read: %v", err)}}}
	default:
		e = l.parse(file, stem(base), src, data)
	}
	e.src = src
	l.entries[file] = e
	return e
}

// parse parses data as the recipe file file.
func (l *loader) parse(file, stem string, src *source, data []byte) *entry {
	doc, errs := parseDocument(file, stem, data)
	l.own(doc.root, file)
	return &entry{doc: doc, errs: errs, src: src}
}

// own records that n and the nodes below it come from file.
func (l *loader) own(n *yaml.Node, file string) {
	if n == nil {
		return
	}
	if _, ok := l.origins[n]; ok {
		return
	}
	l.origins[n] = file
	for _, c := range n.Content {
		l.own(c, file)
	}
}

// recipe resolves e's parents and checks the result.
func (l *loader) recipe(e *entry) (*Recipe, Errors) {
	chain, errs := l.chain(e)
	if len(errs) > 0 {
		return nil, errs
	}
	merged := chain[len(chain)-1].doc.root
	for i := len(chain) - 2; i >= 0; i-- {
		merged = l.merge(merged, chain[i].doc.root, chain[i].doc.file)
	}
	return l.check(e.doc, merged)
}
