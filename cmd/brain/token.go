package main

import (
	"bufio"
	"crypto/rand"
	"fmt"
	"io"
	"strings"

	"github.com/engine-brain/brain/api"
)

const tokenUsage = `Usage:
  brain token new     print a new random API token and its SHA-256
  brain token hash    read a token on stdin and print its SHA-256

brain.yaml stores only the hashes of tokens, never the tokens themselves:

  auth:
    tokens:
      - {name: alice, role: user, sha256: <the hash>}   # roles: user, operator, admin

Give the token to its holder, who sends it as BRAIN_TOKEN (brain CLI) or as
"Authorization: Bearer <token>".
`

// tokenPrefix marks brain's tokens, so that a leaked one is recognisable
// (secret scanners, logs).
const tokenPrefix = "brain_"

// maxTokenLine bounds what `brain token hash` reads.
const maxTokenLine = 4096

// runToken runs `brain token new|hash` and returns the exit code.
func runToken(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprint(stderr, tokenUsage)
		return 2
	}
	switch args[0] {
	case "new":
		token := newToken()
		fmt.Fprintf(stdout, "token:  %s\nsha256: %s\n", token, api.HashToken(token))
		fmt.Fprintln(stderr, "brain token: give the token to its holder; put only the sha256 in brain.yaml (auth.tokens, see `brain token --help`)")
		return 0
	case "hash":
		token, err := readToken(stdin)
		if err != nil {
			fmt.Fprintf(stderr, "brain token hash: %v\n", err)
			return 1
		}
		fmt.Fprintln(stdout, api.HashToken(token))
		return 0
	case "help", "-h", "--help", "-help":
		fmt.Fprint(stdout, tokenUsage)
		return 0
	default:
		fmt.Fprintf(stderr, "brain token: unknown command %q\n", args[0])
		fmt.Fprint(stderr, tokenUsage)
		return 2
	}
}

// newToken returns a random token: the prefix and 260 random bits in
// base32 (crypto/rand).
func newToken() string {
	return tokenPrefix + strings.ToLower(rand.Text()+rand.Text())
}

// readToken reads the first line of r, without surrounding blanks, so that
// both `echo TOKEN | brain token hash` and a typed token with Enter work.
func readToken(r io.Reader) (string, error) {
	sc := bufio.NewScanner(io.LimitReader(r, maxTokenLine))
	sc.Buffer(make([]byte, 0, 256), maxTokenLine)
	var line string
	if sc.Scan() {
		line = strings.TrimSpace(sc.Text())
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("reading the token from stdin: %w", err)
	}
	if line == "" {
		return "", fmt.Errorf("no token on stdin; try: printf %%s \"$TOKEN\" | brain token hash")
	}
	return line, nil
}
