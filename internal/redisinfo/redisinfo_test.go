package redisinfo

import (
	"testing"
	"time"
)

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

func TestParseCommandStats(t *testing.T) {
	t.Parallel()
	txt := "# Commandstats\r\n" +
		"cmdstat_xadd:calls=10,usec=30,usec_per_call=3.00,rejected_calls=0,failed_calls=0\r\n" +
		"cmdstat_fcall:calls=4,usec=200,usec_per_call=50.00,rejected_calls=0,failed_calls=0\r\n" +
		"cmdstat_evalsha:calls=1,usec=40,usec_per_call=40.00,rejected_calls=0,failed_calls=0\r\n" +
		"cmdstat_info:calls=7,usec=70,usec_per_call=10.00,rejected_calls=0,failed_calls=0\r\n"
	got, err := parseCommandStats(txt)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Commands{Calls: 15, Scripts: 240 * time.Microsecond}); got != want {
		t.Errorf("parseCommandStats = %+v, want %+v (INFO left out, scripts' time summed)", got, want)
	}
	if _, err := parseCommandStats("# Memory\r\nused_memory:1\r\n"); err == nil {
		t.Error("a reply without Commandstats: no error")
	}
	if _, err := parseCommandStats("# Commandstats\r\ncmdstat_get:calls=x,usec=1\r\n"); err == nil {
		t.Error("calls=x: no error")
	}
}
