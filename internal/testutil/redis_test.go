package testutil

import (
	"context"
	"testing"
)

func TestRedisServersAreIsolated(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, b := Redis(t), Redis(t)
	if err := a.Set(ctx, "k", "a", 0).Err(); err != nil {
		t.Fatalf("set on a: %v", err)
	}
	if n, err := b.Exists(ctx, "k").Result(); err != nil || n != 0 {
		t.Fatalf("b sees a's key: exists=%d err=%v", n, err)
	}
	got, err := a.Get(ctx, "k").Result()
	if err != nil || got != "a" {
		t.Fatalf("get on a = %q, %v; want \"a\"", got, err)
	}
}
