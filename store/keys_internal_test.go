package store

import "testing"

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
