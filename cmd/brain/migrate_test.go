package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/engine-brain/brain/internal/testutil"
	"github.com/engine-brain/brain/store"
)

// TestMigrateCommand runs `brain migrate` on the keys a brain from before
// partitions left: it moves them, says so, and a second run finds nothing
// to do; bad flags get a clear error.
func TestMigrateCommand(t *testing.T) {
	t.Parallel()
	srv := testutil.StartRedis(t)
	rdb := srv.Client(t)
	testutil.Replay(t, rdb, "../../store/testdata/legacy-layout.jsonl")
	migrate := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), append([]string{"--log-level", "error", "migrate"}, args...), &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "--redis: name the Redis to migrate"},
		{[]string{"--redis", "embedded"}, "--redis: name the Redis to migrate"},
		{[]string{"--redis", "http://" + srv.Addr}, "--redis: "},
		{[]string{"--redis", "redis://" + srv.Addr, "--partitions", "48"}, "Partitions: must be a power of two"},
	} {
		if code, _, stderr := migrate(tc.args...); code == 0 || !strings.Contains(stderr, tc.want) {
			t.Errorf("brain migrate %v = %d, %q; want an error with %q", tc.args, code, stderr, tc.want)
		}
	}
	code, stdout, stderr := migrate("--redis", "redis://"+srv.Addr)
	if code != 0 || !strings.Contains(stdout, "moved 6 processes into 64 partitions") {
		t.Fatalf("brain migrate = %d, %q, %q; want the 6 processes moved", code, stdout, stderr)
	}
	st, err := store.New(rdb, store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CheckLayout(context.Background()); err != nil {
		t.Errorf("the layout after brain migrate: %v", err)
	}
	if code, stdout, _ := migrate("--redis", "redis://"+srv.Addr); code != 0 || !strings.Contains(stdout, "moved 0 processes") {
		t.Errorf("brain migrate again = %d, %q; want nothing moved", code, stdout)
	}
}
