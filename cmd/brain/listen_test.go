package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

func TestCheckOpenMode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		listen   string
		tokens   int
		insecure bool
		refused  bool
		warn     string
	}{
		{"127.0.0.1:8080", 0, false, false, "served on loopback only"},
		{"127.1.2.3:8080", 0, false, false, "served on loopback only"},
		{"localhost:8080", 0, false, false, "served on loopback only"},
		{"[::1]:8080", 0, false, false, "served on loopback only"},
		{"[::ffff:127.0.0.1]:8080", 0, false, false, "served on loopback only"},
		{"0.0.0.0:8080", 0, false, true, ""},
		{":8080", 0, false, true, ""},
		{"[::]:8080", 0, false, true, ""},
		{"192.168.1.10:8080", 0, false, true, ""},
		{"brain.internal:8080", 0, false, true, ""},
		{"0.0.0.0:8080", 0, true, false, "--insecure-open"},
		{"0.0.0.0:8080", 1, false, false, ""},
		{":8080", 2, true, false, ""},
	}
	for _, tt := range tests {
		warn, err := checkOpenMode(tt.listen, tt.tokens, tt.insecure)
		if refused := errors.As(err, new(errOpenMode)); refused != tt.refused {
			t.Errorf("checkOpenMode(%q, %d, %v): error %v, want refused=%v", tt.listen, tt.tokens, tt.insecure, err, tt.refused)
		}
		if tt.warn == "" && warn != "" || !strings.Contains(warn, tt.warn) {
			t.Errorf("checkOpenMode(%q, %d, %v): warning %q, want one with %q", tt.listen, tt.tokens, tt.insecure, warn, tt.warn)
		}
	}
}

// TestServeRefusesOpenNonLoopback runs `brain serve` on every interface
// without tokens: it must refuse before touching anything.
func TestServeRefusesOpenNonLoopback(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"--log-level", "error", "serve", "--listen", "0.0.0.0:0", "--config", writeConfig(t, "")}, &stdout, &stderr)
	if code == 0 {
		t.Fatalf("exit 0, want a refusal; stderr:\n%s", stderr.String())
	}
	for _, want := range []string{"brain serve: refusing to serve an open API on 0.0.0.0:0", "auth.tokens", "--insecure-open"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
}
