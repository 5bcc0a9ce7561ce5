package store

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// LibraryRetention is how long the function library of a brain version
// stays in Redis once no node has said it uses it (TendLibraries). It is
// far longer than a rolling deploy, so only versions nobody runs any more
// lose their library; one that still runs loads it again at its next call.
const LibraryRetention = 24 * time.Hour

// librariesKey scores each brain library by the last time (unix ms) a
// node said it uses it, or by when a node first saw it there.
const librariesKey = keyPrefix + "libraries"

// libraryName matches the names newLibrary gives, and nothing else: a
// library of someone else's that happens to start with "brain_" is never
// deleted.
var libraryName = regexp.MustCompile(`^brain_[0-9a-f]{12}$`)

// TendLibraries notes that this version's function library is in use and
// deletes the libraries of other brain versions that no node has noted
// for LibraryRetention (one found without a note gets its note now, so it
// too is kept that long). Each version of brain loads its own library, so
// without this every deploy would leave one behind. It returns the names
// of the libraries it deleted; on a server without functions, or whose
// ACL denies them, it does nothing. A node calls it when it starts and
// then hourly.
func (s *Store) TendLibraries(ctx context.Context) ([]string, error) {
	return s.tendLibraries(ctx, s.scripts.post.lib.name)
}

func (s *Store) tendLibraries(ctx context.Context, ours string) ([]string, error) {
	libs, err := s.rdb.FunctionList(ctx, redis.FunctionListQuery{LibraryNamePattern: "brain_*"}).Result()
	if err != nil {
		if noFunctions(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("store: list function libraries: %w", err)
	}
	loaded := make(map[string]bool, len(libs))
	var others []string
	for _, l := range libs {
		if !libraryName.MatchString(l.Name) {
			continue
		}
		loaded[l.Name] = true
		if l.Name != ours {
			others = append(others, l.Name)
		}
	}

	now := s.now().UnixMilli()
	pipe := s.rdb.Pipeline()
	pipe.ZAdd(ctx, librariesKey, redis.Z{Score: float64(now), Member: ours})
	var noted *redis.FloatSliceCmd
	if len(others) > 0 {
		first := make([]redis.Z, len(others))
		for i, name := range others {
			first[i] = redis.Z{Score: float64(now), Member: name}
		}
		pipe.ZAddNX(ctx, librariesKey, first...)
		noted = pipe.ZMScore(ctx, librariesKey, others...)
	}
	known := pipe.ZRange(ctx, librariesKey, 0, -1)
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("store: note function libraries: %w", err)
	}

	var retired []string
	var gone []any // members to forget
	for i, name := range others {
		if now-int64(noted.Val()[i]) <= LibraryRetention.Milliseconds() {
			continue
		}
		switch err := s.rdb.FunctionDelete(ctx, name).Err(); {
		case err == nil:
			retired = append(retired, name)
		case !strings.Contains(err.Error(), "Library not found"): // else another node was first
			return retired, fmt.Errorf("store: delete function library %s: %w", name, err)
		}
		gone = append(gone, name)
	}
	for _, name := range known.Val() {
		if !loaded[name] && name != ours { // deleted by hand, or FUNCTION FLUSH
			gone = append(gone, name)
		}
	}
	if len(gone) > 0 {
		if err := s.rdb.ZRem(ctx, librariesKey, gone...).Err(); err != nil {
			return retired, fmt.Errorf("store: forget function libraries: %w", err)
		}
	}
	return retired, nil
}
