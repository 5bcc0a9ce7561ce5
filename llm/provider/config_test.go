package provider

import (
	"slices"
	"strings"
	"testing"
)

func TestBaseURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		raw    string
		errHas string // "" means valid
	}{
		{"http://127.0.0.1:11434/v1", ""},
		{"https://api.example.com", ""},
		{"api.example.com", "p: base_url \"api.example.com\": must be an absolute http or https URL, e.g. https://x"},
		{"ftp://host/", "must be an absolute http or https URL"},
		{"https://host/?x=1", "must have no query or fragment"},
		{"https://host/#top", "must have no query or fragment"},
		{"https://user:secret@host/?x=1", "must have no query or fragment"},
		{"https://host/v1beta?key=secret", `p: base_url "https://host/v1beta": must have no query or fragment`},
		{"https://host/#secret", "must have no query or fragment"},
		{"http://[::1", "p: base_url is not a valid URL; use e.g. https://x"},
	}
	for _, tt := range tests {
		u, err := BaseURL("p", tt.raw, "https://x")
		if tt.errHas == "" {
			if err != nil || u == nil {
				t.Errorf("BaseURL(%q) = %v, %v; want a URL", tt.raw, u, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.errHas) {
			t.Errorf("BaseURL(%q) error %v, want one containing %q", tt.raw, err, tt.errHas)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("BaseURL(%q) error %q carries the password", tt.raw, err)
		}
	}
}

func TestCheckKey(t *testing.T) {
	t.Parallel()
	for key, bad := range map[string]bool{"": false, "sk-abc": false, "sk-abc\n": true, "sk a": true, "sk\x00": true} {
		err := CheckKey("p", key)
		if (err != nil) != bad {
			t.Errorf("CheckKey(%q) = %v, want an error: %v", key, err, bad)
		}
		if err != nil && key != "" && strings.Contains(err.Error(), strings.TrimSpace(key)) {
			t.Errorf("CheckKey error %q echoes the key", err)
		}
	}
}

func TestFirstThose(t *testing.T) {
	t.Parallel()
	got := FirstThose([]int{1, 2, 3, 4, 5, 6}, func(n int) bool { return n%2 == 0 })
	if want := []int{2, 4, 6, 1, 3, 5}; !slices.Equal(got, want) {
		t.Errorf("FirstThose = %v, want %v", got, want)
	}
}
