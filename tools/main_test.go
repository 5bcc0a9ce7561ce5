package tools

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no test leaves goroutines behind (the concurrency
// test starts some).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
