package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"slices"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Server declares an MCP server: exactly one of Command (a local server
// run as a child process, spoken to over stdio) and URL (a remote server
// over streamable HTTP).
type Server struct {
	// Name prefixes the server's tools in the names the model calls.
	Name    string
	Command string
	Args    []string
	// Env is added to the child's environment, which otherwise holds only
	// [InheritedEnv] of the node's own: a child does not see the node's
	// API keys unless a recipe passes them on.
	Env map[string]string
	URL string
}

// InheritedEnv lists the variables of the node's environment that a local
// server's process inherits, when set: what programs need to find
// themselves and their files, and nothing secret.
var InheritedEnv = []string{"HOME", "LANG", "LC_ALL", "LOGNAME", "PATH", "SHELL", "TERM", "TMPDIR", "TZ", "USER"}

// validate checks that s names one way to reach the server.
func (s Server) validate() error {
	switch {
	case s.Name == "":
		return errors.New("MCP server has no name")
	case s.Command != "" && s.URL != "":
		return fmt.Errorf("MCP server %q has both a command and a url; set one", s.Name)
	case s.Command == "" && s.URL == "":
		return fmt.Errorf("MCP server %q has neither a command nor a url; set one", s.Name)
	}
	return nil
}

// key identifies the declaration: two recipes declaring the same server
// alike share its connection.
func (s Server) key() string {
	b, _ := json.Marshal(s) // strings, a slice and a map of strings: cannot fail
	return string(b)
}

// transport returns a new transport to s. A local server's stderr goes to
// stderr.
func (s Server) transport(client *http.Client, stderr *stderrLog) sdk.Transport {
	if s.URL != "" {
		return &sdk.StreamableClientTransport{Endpoint: s.URL, HTTPClient: client}
	}
	cmd := exec.Command(s.Command, s.Args...)
	cmd.Env = s.environ()
	cmd.Stderr = stderr
	return &sdk.CommandTransport{Command: cmd}
}

// environ returns the environment of a local server's process.
func (s Server) environ() []string {
	env := make([]string, 0, len(InheritedEnv)+len(s.Env))
	for _, k := range InheritedEnv {
		if _, set := s.Env[k]; set {
			continue
		}
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.Env)) {
		env = append(env, k+"="+s.Env[k])
	}
	return env
}
