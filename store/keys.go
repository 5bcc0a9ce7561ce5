package store

import (
	"crypto/rand"
	"hash/crc32"
	"strconv"
	"strings"

	"github.com/engine-brain/brain/lifecycle"
)

// The key layout (doc.go). lua/prelude.lua builds the same names;
// TestLuaKeyLayout checks that both agree.
const (
	keyPrefix  = "brain:"
	timersKey  = keyPrefix + "timers"
	wakeGroup  = "nodes"
	maxIDBytes = 128
)

// processKeys returns the keys of one process, in the order the scripts'
// KEYS list them: proc, events, lease, inbox, idem, timers. They share the
// hash tag {pid}. The scripts of a turn are passed only the first few they
// use (a key passed costs Redis, used or not): checkpoint 3, claim and
// commit 4, post 5.
func processKeys(pid string) []string {
	base := keyPrefix + "{" + pid + "}:"
	return []string{base + "proc", base + "events", base + "lease", base + "inbox", base + "idem", base + "timers"}
}

func procKey(pid string) string   { return keyPrefix + "{" + pid + "}:proc" }
func inboxKey(pid string) string  { return keyPrefix + "{" + pid + "}:inbox" }
func eventsKey(pid string) string { return keyPrefix + "{" + pid + "}:events" }
func leaseKey(pid string) string  { return keyPrefix + "{" + pid + "}:lease" }
func timersOf(pid string) string  { return keyPrefix + "{" + pid + "}:timers" }

// liveChannel is the Pub/Sub channel of the live updates of process pid's
// running turns (live.go). Not a key, but named as one, hash tag and all, so
// that it stays in the process's slot should it become a shard channel.
func liveChannel(pid string) string { return keyPrefix + "{" + pid + "}:live" }

// namedLeaseKey is the lease of a duty one node does for all (HoldLease).
func namedLeaseKey(name string) string { return keyPrefix + "lease:" + name }

// workersKey is the index of the workers process pid started, scored by
// creation time.
func workersKey(pid string) string { return keyPrefix + "{" + pid + "}:workers" }

// approvalsKey holds the calls of process pid that wait for approval, each
// "0" until decided, then "1"; approvalsIndex, the processes that have some.
func approvalsKey(pid string) string { return keyPrefix + "{" + pid + "}:approvals" }

const approvalsIndex = keyPrefix + "approvals"

func stateKey(st lifecycle.State) string { return keyPrefix + "state:" + string(st) }

// ownerKey is the index of the processes of owner, scored by creation time.
func ownerKey(owner string) string { return keyPrefix + "owner:" + owner }

func wakeKey(engine string, shard int) string {
	return keyPrefix + "wake:" + engine + ":" + strconv.Itoa(shard)
}

// shard is the wake queue shard of process pid.
func (s *Store) shard(pid string) int {
	return int(crc32.ChecksumIEEE([]byte(pid)) % uint32(s.cfg.Shards))
}

// validID reports whether id can name a process (or an engine): 1 to 128
// URL-safe characters. It keeps the hash tag {pid} intact and "|", which
// separates fields in lease values and timer members, out of ids.
func validID(id string) bool {
	if id == "" || len(id) > maxIDBytes {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '-', c == '.':
		default:
			return false
		}
	}
	return true
}

// newID returns a random process id: "p_" and 16 lower-case base32
// characters (80 bits).
func newID() string {
	return "p_" + strings.ToLower(rand.Text()[:16])
}

// isWakeStream reports whether key names a wake stream.
func isWakeStream(key string) bool { return strings.HasPrefix(key, keyPrefix+"wake:") }

// nodeChannel is the Pub/Sub channel on which the scripts tell node that
// something reached a turn it runs (lua/prelude.lua signal).
func nodeChannel(node string) string { return keyPrefix + "node:" + node }
