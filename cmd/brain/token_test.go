package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

func TestTokenHash(t *testing.T) {
	t.Parallel()
	sum := sha256.Sum256([]byte("s3cret-token"))
	want := hex.EncodeToString(sum[:]) + "\n"
	tests := []struct {
		name, stdin string
		code        int
		stdout      string
		stderr      string
	}{
		{"with newline", "s3cret-token\n", 0, want, ""},
		{"without newline", "s3cret-token", 0, want, ""},
		{"with blanks", "  s3cret-token \r\n", 0, want, ""},
		{"empty", "", 1, "", "no token on stdin"},
		{"blank line", "\n", 1, "", "no token on stdin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			code := runToken([]string{"hash"}, strings.NewReader(tt.stdin), &stdout, &stderr)
			if code != tt.code || stdout.String() != tt.stdout || !strings.Contains(stderr.String(), tt.stderr) {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d, %q, %q", code, stdout.String(), stderr.String(), tt.code, tt.stdout, tt.stderr)
			}
		})
	}
}

func TestTokenNew(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	if code := runToken([]string{"new"}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var token, hash string
	for line := range strings.Lines(stdout.String()) {
		k, v, _ := strings.Cut(line, ":")
		switch k {
		case "token":
			token = strings.TrimSpace(v)
		case "sha256":
			hash = strings.TrimSpace(v)
		}
	}
	if !strings.HasPrefix(token, tokenPrefix) || len(token) < len(tokenPrefix)+50 {
		t.Errorf("token %q: want %s and 50+ random characters", token, tokenPrefix)
	}
	var hashed bytes.Buffer
	runToken([]string{"hash"}, strings.NewReader(token), &hashed, &stderr)
	if hash+"\n" != hashed.String() {
		t.Errorf("printed sha256 %q, but `brain token hash` gives %q", hash, hashed.String())
	}
	var again bytes.Buffer
	runToken([]string{"new"}, strings.NewReader(""), &again, &stderr)
	if again.String() == stdout.String() {
		t.Error("two new tokens are the same")
	}
}

func TestTokenMisuse(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{nil, {"make"}, {"hash", "extra"}} {
		var stdout, stderr bytes.Buffer
		if code := runToken(args, strings.NewReader("x"), &stdout, &stderr); code != 2 {
			t.Errorf("brain token %q: exit %d, want 2", args, code)
		}
	}
}
