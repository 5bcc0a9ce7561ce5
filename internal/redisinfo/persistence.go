package redisinfo

import (
	"context"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Persistence is what a Redis server keeps on disk, which decides what a
// crash of the server itself loses. brain's own guarantees (nothing lost
// or applied twice when a node dies) hold whatever it is.
type Persistence struct {
	// AOF: the append-only file is on (INFO persistence aof_enabled).
	AOF bool
	// Fsync is appendfsync (always, everysec, no), and Save the snapshot
	// schedule ("" when none); both "?" when CONFIG GET is refused, as
	// managed services often do.
	Fsync, Save string
}

// ReadPersistence reads INFO persistence, and CONFIG GET when allowed.
func ReadPersistence(ctx context.Context, rdb *redis.Client) (Persistence, error) {
	txt, err := rdb.Info(ctx, "persistence").Result()
	if err != nil {
		return Persistence{}, fmt.Errorf("INFO persistence: %w", err)
	}
	aof := Field(txt, "aof_enabled")
	if aof == "" {
		return Persistence{}, fmt.Errorf("INFO persistence: no aof_enabled field")
	}
	p := Persistence{AOF: aof == "1", Fsync: "?", Save: "?"}
	if cfg, err := rdb.ConfigGet(ctx, "appendfsync").Result(); err == nil {
		p.Fsync = cfg["appendfsync"]
	}
	if cfg, err := rdb.ConfigGet(ctx, "save").Result(); err == nil {
		p.Save = cfg["save"]
	}
	return p, nil
}

// String says it in a few words, for a log line or a report.
func (p Persistence) String() string {
	var b strings.Builder
	if p.AOF {
		fmt.Fprintf(&b, "append-only file, appendfsync %s", p.Fsync)
	} else {
		b.WriteString("no append-only file")
	}
	switch p.Save {
	case "":
		b.WriteString(", no snapshots")
	case "?":
	default:
		fmt.Fprintf(&b, ", snapshots (save %s)", p.Save)
	}
	return b.String()
}
