package recipes

import "testing"

func TestClosest(t *testing.T) {
	t.Parallel()
	fields := []string{"name", "model", "tools", "system_prompt", "max_corrections", "engine"}
	tests := []struct {
		word, want string
	}{
		{"nam", "name"},
		{"Name", "name"},
		{"modle", "model"}, // swapped letters count as one edit
		{"systm_prompt", "system_prompt"},
		{"max_correction", "max_corrections"},
		{"maxCorrections", "max_corrections"},
		{"maximum_correction_count", ""},
		{"enigne", "engine"},
		{"colour", ""},
		{"x", ""},
		{"nm", ""}, // too short for an edit
	}
	for _, tt := range tests {
		if got := closest(tt.word, fields); got != tt.want {
			t.Errorf("closest(%q) = %q, want %q", tt.word, got, tt.want)
		}
	}
}

func TestEditDistance(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"abc", "", 3},
		{"kitten", "sitting", 3},
		{"chta", "chat", 1},
		{"µs", "us", 1},
	}
	for _, tt := range tests {
		if got := editDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}
