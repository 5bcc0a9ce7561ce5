package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestBenchClusterFlags checks that brain bench refuses what --cluster
// cannot measure, saying why, before it starts or dials any Redis.
func TestBenchClusterFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"zero masters", []string{"--cluster", "0"}, []string{"--cluster 0: want the number of masters", "from 1 to 64", "leave --cluster out"}},
		{"negative", []string{"--cluster=-2"}, []string{"--cluster -2: want the number of masters"}},
		{"more masters than partitions", []string{"--cluster", "65"}, []string{"Cluster (--cluster): must be between 1 and 64", "(got 65)"}},
		{"one server's URL", []string{"--cluster", "3", "--redis", "redis://127.0.0.1:6379/0"},
			[]string{"measures a Redis Cluster, and --redis names one server", "redis+cluster://HOST:PORT", "leave --redis out to start a cluster of 3 masters"}},
		{"aof on a given cluster", []string{"--cluster", "3", "--aof", "--redis", "redis+cluster://127.0.0.1:7000"},
			[]string{"AppendOnly (--aof): only for the throwaway"}},
		{"a bad seed", []string{"--redis", "redis+cluster://node-1"}, []string{`node 1 of 1 ("node-1")`, "is not HOST:PORT"}},
		{"a database on a cluster", []string{"--redis", "redis+cluster://u:hunter2@node-1:6379/2"}, []string{"only database 0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), append([]string{"bench"}, tc.args...), &stdout, &stderr)
			if code != 2 {
				t.Errorf("exit %d, want 2 (stderr %q)", code, stderr.String())
			}
			for _, want := range tc.want {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("stderr %q lacks %q", stderr.String(), want)
				}
			}
			if strings.Contains(stderr.String(), "hunter2") {
				t.Errorf("stderr shows the password: %q", stderr.String())
			}
			if stdout.Len() > 0 {
				t.Errorf("a report for a refused run: %q", stdout.String())
			}
		})
	}
}
