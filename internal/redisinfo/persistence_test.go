package redisinfo_test

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/engine-brain/brain/internal/redisinfo"
	"github.com/engine-brain/brain/internal/testutil"
)

func TestReadPersistence(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := testutil.StartRedis(t)
	rdb := srv.Client(t)
	read := func(rdb *redis.Client) redisinfo.Persistence {
		t.Helper()
		p, err := redisinfo.ReadPersistence(ctx, rdb)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	// The test server runs as redisserver starts it: nothing on disk.
	if got, want := read(rdb), (redisinfo.Persistence{AOF: false, Fsync: "everysec", Save: ""}); got != want {
		t.Errorf("test server: %+v, want %+v", got, want)
	}
	for _, kv := range [][2]string{{"appendonly", "yes"}, {"appendfsync", "always"}} { // the file goes to the server's own directory
		if err := rdb.ConfigSet(ctx, kv[0], kv[1]).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := read(rdb), (redisinfo.Persistence{AOF: true, Fsync: "always", Save: ""}); got != want {
		t.Errorf("after appendonly yes: %+v, want %+v", got, want)
	}
	// A managed service may refuse CONFIG: what INFO says is still read.
	if got, want := read(withoutConfig(t, srv)), (redisinfo.Persistence{AOF: true, Fsync: "?", Save: "?"}); got != want {
		t.Errorf("without CONFIG: %+v, want %+v", got, want)
	}
}

func TestPersistenceString(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		p    redisinfo.Persistence
		want string
	}{
		{redisinfo.Persistence{AOF: true, Fsync: "everysec", Save: "3600 1 300 100"}, "append-only file, appendfsync everysec, snapshots (save 3600 1 300 100)"},
		{redisinfo.Persistence{AOF: false, Fsync: "everysec", Save: ""}, "no append-only file, no snapshots"},
		{redisinfo.Persistence{AOF: true, Fsync: "?", Save: "?"}, "append-only file, appendfsync ?"},
	} {
		if got := tc.p.String(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.p, got, tc.want)
		}
	}
}

// withoutConfig returns a client of srv as a user that may not run CONFIG,
// as managed services have theirs.
func withoutConfig(t *testing.T, srv *testutil.RedisServer) *redis.Client {
	t.Helper()
	if err := srv.Client(t).Do(context.Background(), "ACL", "SETUSER", "app", "on", ">secret", "~*", "&*", "+@all", "-config").Err(); err != nil {
		t.Fatal(err)
	}
	app := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: "app", Password: "secret"})
	t.Cleanup(func() { _ = app.Close() })
	return app
}
