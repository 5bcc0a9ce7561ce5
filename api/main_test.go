package api

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/engine-brain/brain"
	"github.com/engine-brain/brain/internal/testutil"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, testutil.IgnoreRedisRedial) }

var _ Backend = (*brain.Node)(nil)
