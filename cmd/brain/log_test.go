package main

import (
	"testing"
)

// The commands other than serve take their log from the flags before the
// command over BRAIN_LOG_* over the defaults.
func TestCommandLog(t *testing.T) {
	t.Parallel()
	format, level := logSettings[0], logSettings[1]
	tests := []struct {
		name    string
		flagged []flagValue
		env     map[string]string
		want    logOptions
		wantErr string
	}{
		{name: "defaults", want: logOptions{Format: "console", Level: "info"}},
		{name: "environment", env: map[string]string{"BRAIN_LOG_FORMAT": "json", "BRAIN_LOG_LEVEL": ""},
			want: logOptions{Format: "json", Level: "info"}},
		{name: "flags over environment", flagged: []flagValue{{level, "warn"}, {format, "console"}, {level, "debug"}},
			env: map[string]string{"BRAIN_LOG_FORMAT": "json", "BRAIN_LOG_LEVEL": "error"}, want: logOptions{Format: "console", Level: "debug"}},
		{name: "bad variable", env: map[string]string{"BRAIN_LOG_LEVEL": "loud"}, wantErr: `BRAIN_LOG_LEVEL="loud": want debug, info, warn or error (got "loud")`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := commandLog(tt.flagged, envOf(tt.env))
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error %v, want %s", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}
