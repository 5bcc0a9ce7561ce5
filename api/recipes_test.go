package api

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engine-brain/brain/recipes"
)

// Users read recipes without tool settings or MCP server commands and
// environments, which can hold credentials; operators read them whole.
func TestRecipeRedactedForUsers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	recipe := `name: secretive
extends: default
tools:
  - respond
  - {name: http_fetch, config: {allow_hosts: [internal.example]}}
  - vault.*
mcp_servers:
  - {name: vault, command: vault-mcp, args: ["--token", "s3cr3t-arg"], env: {VAULT_TOKEN: s3cr3t-env}}
`
	if err := os.WriteFile(filepath.Join(dir, "secretive.yaml"), []byte(recipe), 0o644); err != nil {
		t.Fatal(err)
	}
	lib, err := recipes.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	b := setup(t)
	b.fake.lib = lib
	for token, wantSecrets := range map[string]bool{tokAlice: false, tokOlga: true} {
		w := b.do("GET", "/v1/recipes/secretive", token, nil, "")
		if w.Code != 200 {
			t.Fatalf("GET as %s: %d %s", token, w.Code, w.Body.String())
		}
		body := w.Body.String()
		for _, secret := range []string{"s3cr3t-arg", "s3cr3t-env", "internal.example", "vault-mcp"} {
			if got := strings.Contains(body, secret); got != wantSecrets {
				t.Errorf("as %s: body contains %q = %v, want %v:\n%s", token, secret, got, wantSecrets, body)
			}
		}
		if !strings.Contains(body, `"vault.*"`) || !strings.Contains(body, `"http_fetch"`) {
			t.Errorf("as %s: the tool names are missing:\n%s", token, body)
		}
	}
}
