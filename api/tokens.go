package api

import (
	"encoding/hex"
	"errors"
	"fmt"
)

// tokenTable is the tokens a server accepts, ready to compare. A server
// replaces its table whole, so a request is judged by one table.
type tokenTable struct {
	creds []credential
	// open: the server has had no tokens since it started, and every
	// request is an admin's.
	open bool
}

// newTokenTable builds the table of tokens, which validateTokens has
// passed.
func newTokenTable(tokens []Token, open bool) *tokenTable {
	t := &tokenTable{open: open}
	for _, tok := range tokens {
		c := credential{identity: identity{name: tok.Name, role: tok.Role}}
		b, _ := hex.DecodeString(tok.SHA256) // checked by validateTokens
		copy(c.digest[:], b)
		t.creds = append(t.creds, c)
	}
	return t
}

// SetTokens replaces the tokens the server accepts, for every request
// authenticated from then on: a token left out is refused, a new one
// works. On error the server keeps the tokens it has. A reload never opens
// the API: a server that has had tokens, given none, refuses every request
// until it is given some; one that started open is closed by its first
// tokens.
func (s *Server) SetTokens(tokens []Token) error {
	if err := errors.Join(validateTokens(tokens)...); err != nil {
		return fmt.Errorf("api: invalid tokens: %w", err)
	}
	for {
		old := s.tokens.Load()
		if s.tokens.CompareAndSwap(old, newTokenTable(tokens, old.open && len(tokens) == 0)) {
			return nil
		}
	}
}

// Open reports whether the API is open: it has had no tokens since it
// started, and every request is an admin's.
func (s *Server) Open() bool { return s.tokens.Load().open }

// validateTokens checks tokens as Config.Tokens: each named once, with a
// role and the hash of a token no other has.
func validateTokens(tokens []Token) []error {
	var errs []error
	names := make(map[string]int, len(tokens))
	hashes := make(map[string]int, len(tokens))
	for i, t := range tokens {
		where := fmt.Sprintf("Tokens[%d]", i)
		if t.Name != "" {
			where = fmt.Sprintf("Tokens[%d] (%s)", i, t.Name)
		}
		if t.Name == "" {
			errs = append(errs, fmt.Errorf("%s: Name: required", where))
		} else if j, dup := names[t.Name]; dup {
			errs = append(errs, fmt.Errorf("%s: Name: %q is also the name of Tokens[%d]; names must be unique", where, t.Name, j))
		} else {
			names[t.Name] = i
		}
		if t.Role.rank() == 0 {
			errs = append(errs, fmt.Errorf("%s: Role: %q is not a role; want user, operator or admin", where, t.Role))
		}
		if b, err := hex.DecodeString(t.SHA256); err != nil || len(b) != 32 {
			// The value is a hash, not the token, but a token pasted here
			// by mistake must not reach a log: it is never quoted.
			errs = append(errs, fmt.Errorf("%s: SHA256: want 64 hex characters, the SHA-256 of the token (`brain token hash`); got %d characters", where, len(t.SHA256)))
		} else if j, dup := hashes[string(b)]; dup {
			errs = append(errs, fmt.Errorf("%s: SHA256: the same token as Tokens[%d]; every token must be different", where, j))
		} else {
			hashes[string(b)] = i
		}
	}
	return errs
}
