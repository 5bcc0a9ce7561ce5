package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/engine-brain/brain/api"
)

// tokensFile is a config file's auth section with a user token for each
// name → token.
func tokensFile(tokens map[string]string) string {
	var b strings.Builder
	b.WriteString("auth:\n  tokens:\n")
	for name, tok := range tokens {
		fmt.Fprintf(&b, "    - {name: %s, role: user, sha256: %s}\n", name, api.HashToken(tok))
	}
	return b.String()
}

// TestTokenReloadOnHangup runs `brain serve` with a token, rewrites its
// config file and sends SIGHUP: a broken file keeps the tokens (and the log
// says where it is broken); a file without the token revokes it and the
// new one works, with no restart.
func TestTokenReloadOnHangup(t *testing.T) {
	t.Parallel()
	bin := brainBinary(t)
	const tokAlice, tokBob = "reload-alice-token", "reload-bob-token"
	dir := t.TempDir()
	conf := filepath.Join(dir, "brain.yaml")
	write := func(text string) {
		t.Helper()
		if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(tokensFile(map[string]string{"alice": tokAlice}))
	srv := startServe(t, bin, dir, "--listen", "127.0.0.1:0")
	status := func(token string) int {
		t.Helper()
		req, err := http.NewRequest("GET", srv.url+"/v1/processes", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	want := func(step string, codes map[string]int) {
		t.Helper()
		for tok, code := range codes {
			if got := status(tok); got != code {
				t.Errorf("%s: %s gets %d, want %d", step, tok, got, code)
			}
		}
	}
	want("at start", map[string]int{tokAlice: 200, tokBob: 401})

	write("auth:\n  tokens:\n    - {name: bob, role: root, sha256: " + api.HashToken(tokBob) + "}\n")
	srv.hangup(t, "tokens reload failed")
	want("after a broken file", map[string]int{tokAlice: 200, tokBob: 401})
	if !strings.Contains(srv.log.String(), `brain.yaml:3:25: auth.tokens[0].role: want user, operator or admin (got \"root\")`) {
		t.Errorf("the failed reload does not say where the file is broken:\n%s", srv.log.String())
	}

	write(tokensFile(map[string]string{"bob": tokBob}))
	srv.hangup(t, "tokens reloaded")
	want("after alice's token was revoked", map[string]int{tokAlice: 401, tokBob: 200})
	srv.stop(t)
}

// recordedSetter is a tokenSetter that records what it is given.
type recordedSetter struct {
	got  [][]api.Token
	open bool
}

func (s *recordedSetter) SetTokens(tokens []api.Token) error {
	s.got = append(s.got, tokens)
	s.open = s.open && len(tokens) == 0
	return nil
}

func (s *recordedSetter) Open() bool { return s.open }

func TestTokenReloader(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	empty := filepath.Join(dir, "empty.yaml")
	for file, text := range map[string]string{good: tokensFile(map[string]string{"alice": "a"}), empty: "listen: 127.0.0.1:8080\n"} {
		if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name    string
		file    string
		open    bool // the API is open before the reload
		wantErr string
		sets    int    // SetTokens calls
		wantLog string // a log message
	}{
		{name: "tokens", file: good, sets: 1, wantLog: "tokens reloaded"},
		{name: "no config file", sets: 0, wantLog: "no config file was read at start"},
		{name: "a missing file", file: filepath.Join(dir, "gone.yaml"), wantErr: "no such file", wantLog: "tokens reload failed: keeping the current tokens"},
		{name: "no tokens left", file: empty, sets: 1, wantLog: "the API refuses every request"},
		{name: "no tokens, open", file: empty, open: true, sets: 1, wantLog: "tokens reloaded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			core, logs := observer.New(zapcore.InfoLevel)
			setter := &recordedSetter{open: tt.open}
			r := &tokenReloader{file: tt.file, lookupEnv: func(string) (string, bool) { return "", false }, api: setter, log: zap.New(core)}
			err := r.Reload(context.Background())
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("Reload: %v, want %q", err, tt.wantErr)
			}
			if len(setter.got) != tt.sets {
				t.Errorf("SetTokens called %d times, want %d", len(setter.got), tt.sets)
			}
			if logs.FilterMessageSnippet(tt.wantLog).Len() == 0 {
				t.Errorf("no log says %q: %v", tt.wantLog, logs.All())
			}
			if tt.open && logs.FilterLevelExact(zapcore.WarnLevel).Len() != 0 {
				t.Errorf("an open API was warned about: %v", logs.All())
			}
		})
	}
}
