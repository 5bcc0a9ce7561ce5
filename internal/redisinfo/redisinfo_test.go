package redisinfo

import "testing"

func TestField(t *testing.T) {
	t.Parallel()
	txt := "# Memory\r\nused_memory:1234\r\nused_memory_human:1.21K\r\n"
	if got := Field(txt, "used_memory"); got != "1234" {
		t.Errorf("used_memory = %q, want 1234", got)
	}
	if got := Field(txt, "nope"); got != "" {
		t.Errorf("nope = %q, want empty", got)
	}
}
