// Package nodetest holds the helpers the tests of internal/node share that
// need none of its types: a scripted model, the recipes of a testdata
// directory, a recorder of commits to wait on, a clock moved by hand, fake
// models and Redis hooks that drop or watch what a node sends.
//
// The package imports testing: only tests may use it. It must not import
// internal/node, whose tests are in package node (an import cycle), nor the
// root package brain.
package nodetest

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/llm/scripted"
	"github.com/engine-brain/brain/recipes"
	"github.com/engine-brain/brain/store"
)

// WaitTimeout bounds every wait of the tests; it never paces them.
const WaitTimeout = 60 * time.Second

// Recipes loads the recipes of dir (a test's testdata/recipes, say),
// failing t if it cannot.
func Recipes(t testing.TB, dir string) *recipes.Library {
	t.Helper()
	lib, err := recipes.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return lib
}

// Script parses yaml as a scripted model's script, failing t if it cannot,
// and returns the model that plays it.
func Script(t testing.TB, yaml string) *scripted.Model {
	t.Helper()
	s, err := scripted.Parse([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return scripted.New(s)
}

// Commits collects the turns a node commits, for tests to wait on. Its Add
// is a node's OnCommit.
type Commits struct {
	mu   sync.Mutex
	recs []store.Record
	ch   chan struct{}
}

// NewCommits returns an empty Commits.
func NewCommits() *Commits { return &Commits{ch: make(chan struct{}, 1)} }

// Add records a committed turn's record.
func (c *Commits) Add(rec store.Record, _ []conversation.Event) {
	c.mu.Lock()
	c.recs = append(c.recs, rec)
	c.mu.Unlock()
	select {
	case c.ch <- struct{}{}:
	default:
	}
}

// Records returns the records committed so far.
func (c *Commits) Records() []store.Record {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]store.Record(nil), c.recs...)
}

// Wait waits until some committed record satisfies ok, and returns it; it
// fails t, naming what, after WaitTimeout.
func (c *Commits) Wait(t testing.TB, what string, ok func(store.Record) bool) store.Record {
	t.Helper()
	deadline := time.NewTimer(WaitTimeout)
	defer deadline.Stop()
	for {
		for _, r := range c.Records() {
			if ok(r) {
				return r
			}
		}
		select {
		case <-c.ch:
		case <-deadline.C:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// WaitState waits until process pid is in state want in st, looking again
// each time progress receives; it fails t after WaitTimeout.
func WaitState(t testing.TB, st *store.Store, pid string, want lifecycle.State, progress <-chan struct{}) {
	t.Helper()
	deadline := time.NewTimer(WaitTimeout)
	defer deadline.Stop()
	for {
		rec, err := st.Get(context.Background(), pid)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Status.State == want {
			return
		}
		select {
		case <-progress:
		case <-deadline.C:
			t.Fatalf("process %s is %s, want %s", pid, rec.Status, want)
		}
	}
}

// Clock is a clock tests move by hand.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a Clock that reads start.
func NewClock(start time.Time) *Clock { return &Clock{t: start} }

// Now returns the clock's time: a node's Clock.
func (c *Clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

// Add moves the clock on by d.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// Logged returns a logger for a node, and a channel that receives once the
// node has logged a message starting with prefix.
func Logged(prefix string) (*zap.Logger, <-chan struct{}) {
	seen := make(chan struct{}, 1)
	observed, _ := observer.New(zap.InfoLevel) // hooks run only on entries a core takes
	return zap.New(zapcore.RegisterHooks(observed, func(e zapcore.Entry) error {
		if strings.HasPrefix(e.Message, prefix) {
			select {
			case seen <- struct{}{}:
			default:
			}
		}
		return nil
	})), seen
}
