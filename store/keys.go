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
	wakeGroup  = "nodes"
	maxIDBytes = 128
	// layoutKey records the deployment's layout (CheckLayout): its number
	// of partitions.
	layoutKey = keyPrefix + "layout"
)

// Partitions. Every process belongs to one partition, derived from its id
// (crc32 of the id, modulo the number of partitions), and every key its
// scripts touch carries the partition's hash tag: its own keys, its
// partition's wake streams, state, owner and approvals indexes and its
// timer index. A script then stays in one Redis Cluster slot, and the same
// layout serves one Redis and a Cluster.
//
// A partition's tag is chosen so that the partitions' slots spread evenly
// over the 16384 of a Cluster: partition i's tag is the smallest decimal
// number whose slot falls in the i-th of P equal runs of slots. Masters
// that split the slots evenly then carry as many partitions each, give or
// take one.
const (
	// DefaultPartitions is the number of partitions of a new deployment.
	DefaultPartitions = 64
	// MaxPartitions bounds them: a node reads and tends every partition's
	// wake streams.
	MaxPartitions = 1024
	clusterSlots  = 16384
)

// layout names the keys of a deployment of n partitions.
type layout struct {
	bases []string // "brain:{tag}:" of each partition
}

func newLayout(partitions int) layout {
	bases := make([]string, partitions)
	filled := 0
	for k := 0; filled < partitions; k++ {
		tag := strconv.Itoa(k)
		run := int(slot(tag)) * partitions / clusterSlots
		if bases[run] == "" {
			bases[run] = keyPrefix + "{" + tag + "}:"
			filled++
		}
	}
	return layout{bases: bases}
}

// partition is the partition of process pid.
func (l layout) partition(pid string) int {
	return int(crc32.ChecksumIEEE([]byte(pid)) % uint32(len(l.bases)))
}

// base is the prefix of the keys of partition n.
func (l layout) base(n int) string { return l.bases[n] }

// of is the prefix of the keys of process pid's partition.
func (l layout) of(pid string) string { return l.bases[l.partition(pid)] }

// processKeys returns the keys of one process, in the order the scripts'
// KEYS list them: proc, events, lease, inbox, idem, timers. The scripts of
// a turn are passed only the first few they use (a key passed costs
// Redis, used or not): checkpoint 3, claim and commit 4, post 5.
func (l layout) processKeys(pid string) []string {
	b := l.of(pid)
	return []string{b + "proc:" + pid, b + "events:" + pid, b + "lease:" + pid, b + "inbox:" + pid, b + "idem:" + pid, b + "timers:" + pid}
}

func (l layout) proc(pid string) string     { return l.of(pid) + "proc:" + pid }
func (l layout) inbox(pid string) string    { return l.of(pid) + "inbox:" + pid }
func (l layout) events(pid string) string   { return l.of(pid) + "events:" + pid }
func (l layout) lease(pid string) string    { return l.of(pid) + "lease:" + pid }
func (l layout) timersOf(pid string) string { return l.of(pid) + "timers:" + pid }

// workers is the index of the workers process pid started, scored by
// creation time.
func (l layout) workers(pid string) string { return l.of(pid) + "workers:" + pid }

// approvals holds the calls of process pid that wait for approval, each
// valued who may decide it until decided, then "1"; waiting (per
// partition) is the index of the processes that have some.
func (l layout) approvals(pid string) string { return l.of(pid) + "approvals:" + pid }
func (l layout) waiting(n int) string        { return l.base(n) + "waiting" }

// due is partition n's timer index: "<pid>|<timer id>" -> due unix ms.
func (l layout) due(n int) string { return l.base(n) + "due" }

// state is partition n's index of the processes in st.
func (l layout) state(n int, st lifecycle.State) string { return l.base(n) + "state:" + string(st) }

// owner is partition n's index of the processes of owner, scored by
// creation time.
func (l layout) owner(n int, owner string) string { return l.base(n) + "owner:" + owner }

// wake is partition n's wake stream of engine.
func (l layout) wake(n int, engine string) string { return l.base(n) + "wake:" + engine }

// bellPrefix starts the bell key of every wake stream: the stream
// brain:{tag}:wake:<engine> has brain:bell:{tag}:<engine>, which the
// scripts touch whenever they queue a wake on it, so that a Cluster's bell
// (bell.go) can watch one prefix for them all. The wake streams themselves
// start with their partition's base, which no one prefix covers.
const bellPrefix = keyPrefix + "bell:"

// bellOf is the bell key of wake stream stream.
func bellOf(stream string) string {
	base, engine, _ := strings.Cut(stream, "}:wake:")
	return bellPrefix + strings.TrimPrefix(base, keyPrefix) + "}:" + engine
}

// streamOfBell is the wake stream whose bell key is key, or "" when key
// is none.
func streamOfBell(key string) string {
	rest, ok := strings.CutPrefix(key, bellPrefix)
	tag, engine, ok2 := strings.Cut(rest, "}:")
	if !ok || !ok2 || !strings.HasPrefix(tag, "{") || engine == "" {
		return ""
	}
	return keyPrefix + tag + "}:wake:" + engine
}

// liveChannel is the Pub/Sub channel of the live updates of process pid's
// running turns (live.go). Not a key, but named as one, hash tag and all, so
// that it stays in the process's slot should it become a shard channel.
func (l layout) liveChannel(pid string) string { return l.of(pid) + "live:" + pid }

// namedLeaseKey is the lease of a duty one node does for all (HoldLease).
func namedLeaseKey(name string) string { return keyPrefix + "lease:" + name }

// slot is the Redis Cluster slot of a hash tag: CRC16 (XMODEM) modulo 16384.
func slot(tag string) uint16 {
	var crc uint16
	for i := 0; i < len(tag); i++ {
		crc ^= uint16(tag[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc % clusterSlots
}

// validID reports whether id can name a process (or an engine): 1 to 128
// URL-safe characters. It keeps hash tags out of ids and "|", which
// separates fields in lease values and timer members.
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

// newIDIn returns a random process id in partition n: a worker's id is
// drawn in its parent's partition, so that what passes between them (the
// workers index, the worker's result) stays in one slot. It takes about as
// many draws as there are partitions.
func (l layout) newIDIn(n int) string {
	for {
		if id := newID(); l.partition(id) == n {
			return id
		}
	}
}

// isWakeStream reports whether key names a wake stream.
func isWakeStream(key string) bool {
	_, rest, ok := strings.Cut(key, "}:")
	return ok && strings.HasPrefix(key, keyPrefix+"{") && strings.HasPrefix(rest, "wake:")
}

// nodeChannel is the Pub/Sub channel on which the scripts tell node that
// something reached a turn it runs (lua/prelude.lua signal).
func nodeChannel(node string) string { return keyPrefix + "node:" + node }

// Key names part ("proc", "inbox", "events", "lease", "idem", "timers",
// "workers", "approvals" or "live") of process pid in a deployment of
// partitions partitions: for whoever looks into Redis by hand (and tests
// that do).
func Key(partitions int, pid, part string) string {
	return newLayout(partitions).of(pid) + part + ":" + pid
}

// WakeStream names engine's wake stream in partition n of a deployment of
// partitions partitions.
func WakeStream(partitions, n int, engine string) string {
	return newLayout(partitions).wake(n, engine)
}

// Partition is the partition of process pid in a deployment of partitions
// partitions.
func Partition(partitions int, pid string) int {
	return newLayout(partitions).partition(pid)
}
