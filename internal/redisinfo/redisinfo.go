// Package redisinfo reads figures from a Redis server's INFO reply: the
// commands it ran, its memory, its CPU time, its persistence and eviction.
// brain bench and the store's benchmarks measure with them; brain serve
// says what a crash of its Redis would lose, and whether Redis may delete
// keys on its own.
package redisinfo

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Commands is what INFO commandstats says a server has run so far.
type Commands struct {
	// Calls counts the commands, those that scripts run included, as Redis
	// counts them; INFO itself is left out, so that measuring does not
	// count.
	Calls int64
	// Scripts is the time the server spent running scripts and functions
	// (EVAL, EVALSHA, FCALL), the commands they ran included: unlike INFO
	// cpu it leaves out the network and what else the server does.
	Scripts time.Duration
}

// scriptCommands are the commandstats names of script calls.
var scriptCommands = map[string]bool{
	"cmdstat_eval": true, "cmdstat_evalsha": true, "cmdstat_eval_ro": true, "cmdstat_evalsha_ro": true,
	"cmdstat_fcall": true, "cmdstat_fcall_ro": true,
}

// CommandStats reads INFO commandstats.
func CommandStats(ctx context.Context, rdb *redis.Client) (Commands, error) {
	txt, err := rdb.Info(ctx, "commandstats").Result()
	if err != nil {
		return Commands{}, fmt.Errorf("INFO commandstats: %w", err)
	}
	return parseCommandStats(txt)
}

func parseCommandStats(txt string) (Commands, error) {
	var total Commands
	if !strings.Contains(txt, "# Commandstats") {
		return total, fmt.Errorf("INFO commandstats: no Commandstats section in the reply")
	}
	for line := range strings.Lines(txt) {
		name, stats, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") || name == "cmdstat_info" {
			continue
		}
		for kv := range strings.SplitSeq(stats, ",") {
			k, v, _ := strings.Cut(kv, "=")
			if k != "calls" && (k != "usec" || !scriptCommands[name]) {
				continue
			}
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return Commands{}, fmt.Errorf("INFO commandstats: %s: %s=%q is not a number", name, k, v)
			}
			if k == "calls" {
				total.Calls += n
			} else {
				total.Scripts += time.Duration(n) * time.Microsecond
			}
		}
	}
	return total, nil
}

// UsedMemory returns INFO memory's used_memory, in bytes.
func UsedMemory(ctx context.Context, rdb *redis.Client) (int64, error) {
	txt, err := rdb.Info(ctx, "memory").Result()
	if err != nil {
		return 0, fmt.Errorf("INFO memory: %w", err)
	}
	v := Field(txt, "used_memory")
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("INFO memory: used_memory %q is not a number", v)
	}
	return n, nil
}

// Field returns the value of field in an INFO reply, or "".
func Field(txt, field string) string {
	for line := range strings.Lines(txt) {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok && k == field {
			return v
		}
	}
	return ""
}

// ServerCPU returns the CPU time the Redis server has used (INFO cpu:
// used_cpu_user + used_cpu_sys), all its threads.
func ServerCPU(ctx context.Context, rdb redis.UniversalClient) (time.Duration, error) {
	txt, err := rdb.Info(ctx, "cpu").Result()
	if err != nil {
		return 0, fmt.Errorf("INFO cpu: %w", err)
	}
	var total float64
	for _, field := range []string{"used_cpu_user", "used_cpu_sys"} {
		v, err := strconv.ParseFloat(Field(txt, field), 64)
		if err != nil {
			return 0, fmt.Errorf("INFO cpu: %s %q is not a number", field, Field(txt, field))
		}
		total += v
	}
	return time.Duration(total * float64(time.Second)), nil
}
