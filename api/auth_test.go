package api

import (
	"crypto/sha256"
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
	"testing"
	"time"
)

func TestHashToken(t *testing.T) {
	t.Parallel()
	// sha256("secret"), as `printf secret | sha256sum` prints it.
	if got, want := HashToken("secret"), "2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b"; got != want {
		t.Errorf("HashToken = %s, want %s", got, want)
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	ok := HashToken("a")
	pasted := "my-secret-token-pasted-by-mistake"
	tests := []struct {
		name string
		cfg  Config
		want []string // parts of the error; none for a valid config
	}{
		{name: "valid", cfg: Config{Backend: newFake(), Tokens: []Token{{Name: "a", Role: RoleUser, SHA256: ok}}}},
		{name: "open", cfg: Config{Backend: newFake()}},
		{name: "upper-case hash", cfg: Config{Backend: newFake(), Tokens: []Token{{Name: "a", Role: RoleAdmin, SHA256: strings.ToUpper(ok)}}}},
		{name: "no backend", cfg: Config{}, want: []string{"Backend: required"}},
		{name: "unknown role", cfg: Config{Backend: newFake(), Tokens: []Token{{Name: "a", Role: "root", SHA256: ok}}},
			want: []string{`Tokens[0] (a): Role: "root" is not a role; want user, operator or admin`}},
		{name: "no role", cfg: Config{Backend: newFake(), Tokens: []Token{{Name: "a", SHA256: ok}}}, want: []string{`Role: "" is not a role`}},
		{name: "short hash", cfg: Config{Backend: newFake(), Tokens: []Token{{Name: "a", Role: RoleUser, SHA256: ok[:63]}}},
			want: []string{"Tokens[0] (a): SHA256: want 64 hex characters", "got 63 characters"}},
		{name: "token instead of its hash", cfg: Config{Backend: newFake(), Tokens: []Token{{Name: "a", Role: RoleUser, SHA256: pasted}}},
			want: []string{"SHA256: want 64 hex characters"}},
		{name: "not hex", cfg: Config{Backend: newFake(), Tokens: []Token{{Name: "a", Role: RoleUser, SHA256: strings.Repeat("g", 64)}}},
			want: []string{"SHA256: want 64 hex characters"}},
		{name: "no name", cfg: Config{Backend: newFake(), Tokens: []Token{{Role: RoleUser, SHA256: ok}}}, want: []string{"Tokens[0]: Name: required"}},
		{name: "duplicate name", cfg: Config{Backend: newFake(), Tokens: []Token{
			{Name: "a", Role: RoleUser, SHA256: ok}, {Name: "a", Role: RoleAdmin, SHA256: HashToken("b")}}},
			want: []string{`Tokens[1] (a): Name: "a" is also the name of Tokens[0]`}},
		{name: "duplicate token", cfg: Config{Backend: newFake(), Tokens: []Token{
			{Name: "a", Role: RoleUser, SHA256: ok}, {Name: "b", Role: RoleAdmin, SHA256: strings.ToUpper(ok)}}},
			want: []string{"Tokens[1] (b): SHA256: the same token as Tokens[0]"}},
		{name: "negative body limit", cfg: Config{Backend: newFake(), MaxBody: -1}, want: []string{"MaxBody: must be positive (got -1)"}},
		{name: "sub-millisecond block", cfg: Config{Backend: newFake(), FollowBlock: 500 * time.Microsecond},
			want: []string{"FollowBlock: must be at least 1ms (got 500µs)"}},
		{name: "negative heartbeat", cfg: Config{Backend: newFake(), Heartbeat: -time.Second}, want: []string{"Heartbeat: must be at least 1ms"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := New(tt.cfg)
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("New: no error, want %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if strings.Contains(err.Error(), pasted) {
				t.Errorf("the error quotes the token: %q", err)
			}
		})
	}
}

// Every token authenticates as its own holder, whatever its place in the
// list; a near miss does not.
func TestMatch(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for tok, name := range map[string]string{tokAlice: "alice", tokBob: "bob", tokOlga: "olga", tokAdam: "adam"} {
		id, ok := b.srv.tokens.Load().match(sha256.Sum256([]byte(tok)))
		if !ok || id.name != name {
			t.Errorf("match(%s) = %+v %v, want %s", tok, id, ok, name)
		}
	}
	if id, ok := b.srv.tokens.Load().match(sha256.Sum256([]byte(tokAdam + "x"))); ok {
		t.Errorf("a near miss matched %+v", id)
	}
}

// The token comparison is constant-time: match compares digests with
// crypto/subtle only, and its loop over the tokens never leaves early (the
// time taken must not tell which token matched, nor how many were tried).
// Timing cannot be measured reliably in a test, so the code's shape is
// checked instead.
func TestMatchIsConstantTime(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "auth.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var match *ast.FuncDecl
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Name.Name == "match" {
			match = fd
		}
	}
	if match == nil {
		t.Fatal("auth.go has no func match")
	}
	var compares, loops int
	ast.Inspect(match.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if x, ok := n.X.(*ast.Ident); ok && x.Name == "subtle" && n.Sel.Name == "ConstantTimeCompare" {
				compares++
			}
		case *ast.BinaryExpr:
			if n.Op == token.EQL || n.Op == token.NEQ {
				if !isIntCompare(n) {
					t.Errorf("%s: match compares with %s; use crypto/subtle", fset.Position(n.Pos()), n.Op)
				}
			}
		case *ast.CallExpr:
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok {
				if x, ok := sel.X.(*ast.Ident); ok && (x.Name == "bytes" || x.Name == "strings") {
					t.Errorf("%s: match calls %s.%s; use crypto/subtle", fset.Position(n.Pos()), x.Name, sel.Sel.Name)
				}
			}
		case *ast.RangeStmt:
			loops++
			ast.Inspect(n.Body, func(m ast.Node) bool {
				switch m := m.(type) {
				case *ast.ReturnStmt:
					t.Errorf("%s: match returns from inside its loop over the tokens", fset.Position(m.Pos()))
				case *ast.BranchStmt:
					t.Errorf("%s: match leaves its loop over the tokens early (%s)", fset.Position(m.Pos()), m.Tok)
				case *ast.IfStmt:
					t.Errorf("%s: match branches inside its loop over the tokens", fset.Position(m.Pos()))
				}
				return true
			})
		}
		return true
	})
	if compares != 1 || loops != 1 {
		t.Errorf("match: %d subtle.ConstantTimeCompare calls in %d loops, want 1 in 1", compares, loops)
	}
}

// isIntCompare reports whether a comparison is of an index with a literal
// (found < 0 and the like), the only comparisons match may make.
func isIntCompare(b *ast.BinaryExpr) bool {
	_, lit := b.Y.(*ast.BasicLit)
	return lit
}
