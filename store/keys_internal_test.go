package store

import (
	"strings"
	"testing"
)

// TestPartitionSlots checks that the partitions' hash tags spread their
// slots evenly: each falls in its own run of 16384/P slots, so that masters
// splitting the slots evenly carry as many partitions each, give or take
// one (with 3 masters and 64 partitions: 21, 22, 21).
func TestPartitionSlots(t *testing.T) {
	t.Parallel()
	for _, p := range []int{1, 2, 64, 1024} {
		l := newLayout(p)
		for n, base := range l.bases {
			tag := base[len(keyPrefix)+1 : len(base)-2] // brain:{tag}:
			if run := int(slot(tag)) * p / clusterSlots; run != n {
				t.Fatalf("%d partitions: partition %d's tag %q is in slot %d, the run of partition %d", p, n, tag, slot(tag), run)
			}
		}
	}
	l := newLayout(64)
	masters := make([]int, 3)
	for _, base := range l.bases {
		s := int(slot(base[len(keyPrefix)+1 : len(base)-2]))
		masters[s*3/clusterSlots]++ // as redis-cli --cluster create splits them
	}
	for m, n := range masters {
		if n < 21 || n > 22 {
			t.Errorf("master %d of 3 carries %d of 64 partitions, want 21 or 22 (%v)", m, n, masters)
		}
	}
	// Known values of Redis's CRC16 (CLUSTER KEYSLOT).
	for key, want := range map[string]uint16{"": 0, "123456789": 0x31c3 % clusterSlots, "foo": 12182, "bar": 5061} {
		if got := slot(key); got != want {
			t.Errorf("slot(%q) = %d, want %d", key, got, want)
		}
	}
}

// TestBellKeys checks that a wake stream's bell key carries its hash tag
// (the same slot) and leads back to it.
func TestBellKeys(t *testing.T) {
	l := newLayout(64)
	for n := range l.bases {
		for _, engine := range []string{"chat", "my-engine_2"} {
			stream := l.wake(n, engine)
			bell := bellOf(stream)
			if !strings.HasPrefix(bell, bellPrefix) {
				t.Errorf("%s's bell %q does not start with %q", stream, bell, bellPrefix)
			}
			if slot(tagOf(bell)) != slot(tagOf(stream)) {
				t.Errorf("bell %q and wake stream %q are in different slots", bell, stream)
			}
			if got := streamOfBell(bell); got != stream {
				t.Errorf("streamOfBell(%q) = %q, want %q", bell, got, stream)
			}
		}
	}
	for _, key := range []string{"brain:{1}:proc:p1", "brain:layout", "other:bell:{1}:chat", "brain:bell:{1}:", "brain:bell:1}:chat"} {
		if got := streamOfBell(key); got != "" {
			t.Errorf("streamOfBell(%q) = %q, want none", key, got)
		}
	}
}

// tagOf is the hash tag of key: what is between its first "{" and the
// next "}".
func tagOf(key string) string {
	_, rest, _ := strings.Cut(key, "{")
	tag, _, _ := strings.Cut(rest, "}")
	return tag
}
