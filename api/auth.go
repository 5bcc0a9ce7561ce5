package api

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"strings"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/store"
)

// Role is what a bearer token may do.
type Role string

// The roles, each allowed what the one before it is.
const (
	// RoleUser creates processes, sees and messages only those it created,
	// and reads only their user view.
	RoleUser Role = "user"
	// RoleOperator sees every process, reads the raw view, steers, pauses,
	// resumes, stops and retries.
	RoleOperator Role = "operator"
	// RoleAdmin is an operator that may also reload the recipes.
	RoleAdmin Role = "admin"
)

func (r Role) rank() int {
	switch r {
	case RoleUser:
		return 1
	case RoleOperator:
		return 2
	case RoleAdmin:
		return 3
	}
	return 0
}

// allows reports whether role r may do what needs role need.
func (r Role) allows(need Role) bool { return r.rank() > 0 && r.rank() >= need.rank() }

// Token is a configured bearer token. Only its SHA-256 is kept, so a
// configuration file holds no usable secret.
type Token struct {
	// Name identifies the holder: the owner of the processes it creates
	// and the sender of its messages ("user:<name>", "operator:<name>").
	Name string
	Role Role
	// SHA256 is the hex SHA-256 of the token (HashToken).
	SHA256 string
}

// HashToken returns the hex SHA-256 of token, the form Token.SHA256 takes.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// identity is who made a request. In open mode (no tokens configured) it
// is an admin with no name.
type identity struct {
	name string
	role Role
}

// sees reports whether the caller may see process rec: operators see all,
// users only the processes they created.
func (id identity) sees(rec store.Record) bool {
	return id.role != RoleUser || rec.Owner == id.name
}

// mayDecide reports whether the caller may decide call c of a process it
// sees: operators decide every call, users those whose recipe lets the
// user decide (approval.by: user).
func (id identity) mayDecide(c conversation.PendingCall) bool {
	return id.role != RoleUser || c.By == conversation.ApproverUser
}

// userFrom is the sender of the caller's user messages.
func (id identity) userFrom() string { return qualified("user", id.name) }

// operatorBy is the sender of the caller's operator messages and the actor
// of its lifecycle events.
func (id identity) operatorBy() string { return qualified("operator", id.name) }

func qualified(kind, name string) string {
	if name == "" {
		return kind
	}
	return kind + ":" + name
}

type identityKey struct{}

func withIdentity(ctx context.Context, id identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

func identityFrom(ctx context.Context) identity {
	id, _ := ctx.Value(identityKey{}).(identity)
	return id
}

// credential is a configured token, ready to compare.
type credential struct {
	identity
	digest [sha256.Size]byte
}

// authenticate returns who sent r. The token itself never leaves this
// function: it is hashed at once and never logged.
func (s *Server) authenticate(r *http.Request) (identity, error) {
	tokens := s.tokens.Load()
	if tokens.open {
		return identity{role: RoleAdmin}, nil
	}
	header := r.Header.Get("Authorization")
	if header == "" {
		return identity{}, errorf(http.StatusUnauthorized, CodeUnauthorized, "missing bearer token: send the header Authorization: Bearer <token>")
	}
	scheme, token, _ := strings.Cut(header, " ")
	token = strings.TrimSpace(token)
	if !strings.EqualFold(scheme, "Bearer") || token == "" {
		return identity{}, errorf(http.StatusUnauthorized, CodeUnauthorized, "the Authorization header must be Bearer <token>")
	}
	id, ok := tokens.match(sha256.Sum256([]byte(token)))
	if !ok {
		return identity{}, errorf(http.StatusUnauthorized, CodeUnauthorized, "invalid bearer token")
	}
	return id, nil
}

// match returns the identity of the credential whose digest is digest. It
// compares digest with every credential in constant time and never stops
// early, so the time it takes tells nothing about which token matched or
// how close a guess came.
func (t *tokenTable) match(digest [sha256.Size]byte) (identity, bool) {
	found := -1
	for i := range t.creds {
		eq := subtle.ConstantTimeCompare(digest[:], t.creds[i].digest[:])
		found = subtle.ConstantTimeSelect(eq, i, found)
	}
	if found < 0 {
		return identity{}, false
	}
	return t.creds[found].identity, true
}
