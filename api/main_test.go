package api

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/engine-brain/brain"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var _ Backend = (*brain.Node)(nil)
