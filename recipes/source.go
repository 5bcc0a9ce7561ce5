package recipes

import (
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

//go:embed *.yaml
var builtinFS embed.FS

// builtinDir is how messages name the directory of the built-in recipes.
const builtinDir = "<builtin>"

// source is a directory of recipe files, NAME.yaml each: a directory on
// disk, or the built-in recipes embedded in the binary.
type source struct {
	fsys    fs.FS
	dir     string // as shown in messages
	builtin bool
}

func builtinSource() *source {
	return &source{fsys: builtinFS, dir: builtinDir, builtin: true}
}

func dirSource(dir string) *source {
	return &source{fsys: os.DirFS(dir), dir: dir}
}

// file returns the name of recipe name's file as messages show it.
func (s *source) file(name string) string {
	if s.builtin {
		return s.dir + "/" + name + ".yaml"
	}
	return filepath.Join(s.dir, name+".yaml")
}

// has reports whether the source holds a regular file NAME.yaml.
func (s *source) has(name string) bool {
	info, err := fs.Stat(s.fsys, name+".yaml")
	return err == nil && !info.IsDir()
}

// names returns the names of the source's recipes: its *.yaml files, sorted.
func (s *source) names() []string {
	matches, _ := fs.Glob(s.fsys, "*.yaml")
	names := make([]string, 0, len(matches))
	for _, m := range matches {
		if info, err := fs.Stat(s.fsys, m); err == nil && !info.IsDir() {
			names = append(names, strings.TrimSuffix(m, ".yaml"))
		}
	}
	slices.Sort(names)
	return names
}

var errTooLarge = errors.New("too large")

// read returns the contents of base, a file of the source, refusing files
// larger than MaxFileSize before reading them.
func (s *source) read(base string) (data []byte, size int64, err error) {
	f, err := s.fsys.Open(base)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	if info.IsDir() {
		return nil, 0, fmt.Errorf("is a directory; name its recipe files, such as %s", filepath.Join(s.dir, base, "*.yaml"))
	}
	if info.Size() > MaxFileSize {
		return nil, info.Size(), errTooLarge
	}
	data, err = io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, 0, err
	}
	if len(data) > MaxFileSize {
		return nil, int64(len(data)), errTooLarge
	}
	return data, int64(len(data)), nil
}

// stem returns a file's base name without its .yaml or .yml extension.
func stem(path string) string {
	base := filepath.Base(path)
	for _, ext := range []string{".yaml", ".yml"} {
		if s, ok := strings.CutSuffix(base, ext); ok {
			return s
		}
	}
	return base
}
