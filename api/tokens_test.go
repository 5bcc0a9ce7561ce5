package api

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// TestSetTokens replaces a server's tokens step by step: a token left out
// is refused from then on, a new one works, a bad list changes nothing,
// and no list of tokens opens an API that has had some.
func TestSetTokens(t *testing.T) {
	t.Parallel()
	const tokAlice2 = "tok-alice-second"
	tests := []struct {
		name  string
		open  bool // the server starts without tokens
		steps []tokenStep
	}{
		{name: "revoke and add", steps: []tokenStep{
			{tokens: []Token{{Name: "alice", Role: RoleUser, SHA256: HashToken(tokAlice2)}, {Name: "olga", Role: RoleOperator, SHA256: HashToken(tokOlga)}},
				status: map[string]int{tokAlice: 401, tokAlice2: 200, tokOlga: 200, tokBob: 401, "": 401}},
			{tokens: []Token{{Name: "a", Role: RoleUser, SHA256: HashToken("x")}, {Name: "a", Role: RoleUser, SHA256: HashToken("y")}},
				err:    `api: invalid tokens: Tokens[1] (a): Name: "a" is also the name of Tokens[0]`,
				status: map[string]int{tokAlice2: 200, tokOlga: 200, "x": 401}},
			{tokens: nil, status: map[string]int{tokAlice2: 401, tokOlga: 401, "": 401}},
			{tokens: []Token{{Name: "bob", Role: RoleUser, SHA256: HashToken(tokBob)}}, status: map[string]int{tokBob: 200, tokAlice2: 401, "": 401}},
		}},
		{name: "an open server closes", open: true, steps: []tokenStep{
			{tokens: nil, open: true, status: map[string]int{"": 200}},
			{tokens: []Token{{Name: "bob", Role: RoleUser, SHA256: HashToken(tokBob)}}, status: map[string]int{tokBob: 200, "": 401}},
			{tokens: nil, status: map[string]int{tokBob: 401, "": 401}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, func(c *Config) {
				if tt.open {
					c.Tokens = nil
				}
			})
			for i, step := range tt.steps {
				err := b.srv.SetTokens(step.tokens)
				if got := fmt.Sprint(err); step.err == "" && err != nil || step.err != "" && !strings.Contains(got, step.err) {
					t.Fatalf("step %d: SetTokens: %v, want %q", i, err, step.err)
				}
				if got := b.srv.Open(); got != step.open {
					t.Errorf("step %d: Open() = %v, want %v", i, got, step.open)
				}
				for tok, want := range step.status {
					if w := b.do("GET", "/v1/processes", tok, nil, ""); w.Code != want {
						t.Errorf("step %d: token %q: %d, want %d: %s", i, tok, w.Code, want, w.Body)
					}
				}
			}
		})
	}
}

// tokenStep is a SetTokens call, its error ("" for none), whether the API
// is open after it, and the status of a request with each token ("" for
// none).
type tokenStep struct {
	tokens []Token
	err    string
	open   bool
	status map[string]int
}

// TestSetTokensConcurrent swaps the tokens while requests run (the race
// detector watches): every request is judged by one table or the other,
// and once the swaps end the last table holds.
func TestSetTokensConcurrent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	withAlice := []Token{{Name: "alice", Role: RoleUser, SHA256: HashToken(tokAlice)}}
	withoutAlice := []Token{{Name: "bob", Role: RoleUser, SHA256: HashToken(tokBob)}}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 200 {
				if w := b.do("GET", "/v1/processes", tokAlice, nil, ""); w.Code != 200 && w.Code != 401 {
					t.Errorf("a request during the swaps: %d %s", w.Code, w.Body)
					return
				}
			}
		})
	}
	wg.Go(func() {
		for i := range 200 {
			tokens := withAlice
			if i%2 == 0 {
				tokens = withoutAlice
			}
			if err := b.srv.SetTokens(tokens); err != nil {
				t.Error(err)
				return
			}
		}
		if err := b.srv.SetTokens(withoutAlice); err != nil {
			t.Error(err)
		}
	})
	wg.Wait()
	if w := b.do("GET", "/v1/processes", tokAlice, nil, ""); w.Code != 401 {
		t.Errorf("alice after her token was revoked: %d, want 401", w.Code)
	}
	if w := b.do("GET", "/v1/processes", tokBob, nil, ""); w.Code != 200 {
		t.Errorf("bob with his new token: %d, want 200", w.Code)
	}
}
