package recipes

import (
	"testing"
	"time"

	"github.com/engine-brain/brain/inbox"
)

func TestDefaults(t *testing.T) {
	t.Parallel()
	var r Recipe
	tests := []struct {
		name      string
		got, want any
	}{
		{"engine", r.EngineKind(), EngineChat},
		{"turn_end of chat", r.TurnEndMode(), TurnEndRespond},
		{"turn_end of worker", (&Recipe{Engine: EngineWorker}).TurnEndMode(), TurnEndFinishTask},
		{"explicit turn_end", (&Recipe{Engine: EngineWorker, TurnEnd: TurnEndNatural}).TurnEndMode(), TurnEndNatural},
		{"max_corrections", r.Validation.Corrections(), 2},
		{"max_corrections 0", Validation{MaxCorrections: intp(0)}.Corrections(), 0},
		{"min_tool_result_chars", r.Validation.DataRelay.MinToolResult(), 500},
		{"max_reply_chars", r.Validation.DataRelay.MaxReply(), 200},
		{"max_reply_chars 0", DataRelay{MaxReplyChars: intp(0)}.MaxReply(), 0},
		{"min_tool_result_chars set", DataRelay{MinToolResultChars: intp(900)}.MinToolResult(), 900},
		{"max_rounds", r.Limits.Rounds(), 40},
		{"max_rounds set", Limits{MaxRounds: 3}.Rounds(), 3},
		{"turn_timeout", r.Limits.Timeout(), time.Duration(0)},
		{"max_depth", r.Limits.Depth(), 3},
		{"max_depth set", Limits{MaxDepth: 1}.Depth(), 1},
		{"max_workers", r.Limits.Workers(), 5},
		{"max_workers 0", Limits{MaxWorkers: intp(0)}.Workers(), 0},
		{"max_workers set", Limits{MaxWorkers: intp(12)}.Workers(), 12},
		{"max_context_tokens", r.Limits.ContextTokens(), 100_000},
		{"max_context_tokens set", Limits{MaxContextTokens: 6000}.ContextTokens(), 6000},
		{"steering.user_messages", r.Steering.User(), inbox.SteeringQueue},
		{"steering.user_messages set", Steering{UserMessages: inbox.SteeringReject}.User(), inbox.SteeringReject},
		{"has tool", (&Recipe{Tools: []ToolRef{{Name: "respond"}}}).HasTool("respond"), true},
		{"has no tool", r.HasTool("respond"), false},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s = %v, want %v", tt.name, tt.got, tt.want)
		}
	}
}
