package node

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/engine-brain/brain/internal/ctxtime"
	"github.com/engine-brain/brain/store"
)

// wakeReader reads the node's wakes with affinity (store.HomeStreams): the
// streams the node is home to at once; from the others, every
// AffinityWait, the wakes that have waited that long (their home node is
// busy, stopped or not yet known). A process's wakes keep reaching the
// node that keeps its log while that node can take them, and any node
// takes them when it cannot.
type wakeReader struct {
	store   *store.Store
	node    string
	engines []string
	wait    time.Duration // AffinityWait; 0: no affinity
	streams atomic.Pointer[wakeStreams]
	stolen  time.Time // when the away streams were last looked at (the reader's own)
}

// wakeStreams are the streams a node is home to and the others.
type wakeStreams struct{ home, away []string }

func newWakeReader(st *store.Store, cfg Config) (*wakeReader, error) {
	r := &wakeReader{store: st, node: cfg.NodeID, engines: cfg.Engines, wait: max(cfg.AffinityWait, 0)}
	// Until the first beat, the node knows no other: every stream is home.
	if err := r.update(nil); err != nil {
		return nil, err
	}
	return r, nil
}

// update recomputes the home streams for members.
func (r *wakeReader) update(members store.Members) error {
	home, away, err := r.store.HomeStreams(r.node, r.engines, members)
	if err != nil {
		return err
	}
	if r.wait == 0 {
		home, away = append(home, away...), nil
	}
	r.streams.Store(&wakeStreams{home: home, away: away})
	return nil
}

// beat notes the node as a reader of its engines' wakes for ttl and
// updates the home streams with who else reads them.
func (r *wakeReader) beat(ctx context.Context, ttl time.Duration) error {
	members, err := r.store.Beat(ctx, r.node, r.engines, ttl)
	if err != nil {
		return err
	}
	return r.update(members)
}

// leave tells the other nodes that this one reads no more wakes.
func (r *wakeReader) leave(ctx context.Context) error {
	return r.store.Leave(ctx, r.node, r.engines)
}

// read reads up to count wakes: from the home streams, waiting up to
// AffinityWait for one (a second without affinity), and, when that left
// room, the wakes of the away streams that waited AffinityWait, if they
// were last looked at that long ago.
func (r *wakeReader) read(ctx context.Context, count int) ([]store.Wake, error) {
	s := r.streams.Load()
	if r.wait == 0 {
		return r.store.ReadWakesFrom(ctx, r.node, s.home, count, time.Second)
	}
	var wakes []store.Wake
	if len(s.home) > 0 {
		var err error
		if wakes, err = r.store.ReadWakesFrom(ctx, r.node, s.home, count, r.wait); err != nil {
			return nil, err
		}
	} else if time.Since(r.stolen) < r.wait {
		if ctxtime.Sleep(ctx, r.wait-time.Since(r.stolen)) != nil {
			return nil, nil
		}
	}
	if len(s.away) == 0 || len(wakes) >= count || time.Since(r.stolen) < r.wait {
		return wakes, nil
	}
	r.stolen = time.Now()
	more, err := r.store.StealWakes(ctx, r.node, s.away, r.wait, count-len(wakes))
	return append(wakes, more...), err
}
