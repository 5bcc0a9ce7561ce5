package redisinfo_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/engine-brain/brain/internal/redisinfo"
	"github.com/engine-brain/brain/internal/redisserver"
	"github.com/engine-brain/brain/internal/testutil"
)

func TestClusterEnabled(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	if on, err := redisinfo.ClusterEnabled(ctx, testutil.Redis(t)); err != nil || on {
		t.Errorf("a standalone server: %v, %v; want false", on, err)
	}
	conf := filepath.Join(t.TempDir(), "cluster.conf")
	if err := os.WriteFile(conf, []byte("cluster-enabled yes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := testutil.StartRedisWith(t, redisserver.Options{ConfigFile: conf})
	if on, err := redisinfo.ClusterEnabled(ctx, srv.Client(t)); err != nil || !on {
		t.Errorf("a server in cluster mode: %v, %v; want true", on, err)
	}
}
