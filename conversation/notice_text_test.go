package conversation_test

import (
	"testing"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/engines/rounds"
	"github.com/engine-brain/brain/engines/vogon"
)

// Every notice the round loop and the node write reaches the user, in a
// text of its own for people, not the notice's own (written for
// operators).
func TestUserViewShowsEveryNotice(t *testing.T) {
	t.Parallel()
	for _, code := range []string{
		rounds.NoticeMaxRounds, rounds.NoticeTimeout, rounds.NoticeModelError, rounds.NoticeEmptyAnswer,
		rounds.NoticeModelAuth, rounds.NoticeModelPayload, rounds.NoticeTokenBudget, rounds.NoticeDayTokenBudget,
		rounds.NoticeHalted, "turn_failed", // internal/node/turn.go
		vogon.NoticeGateFailed,
	} {
		const operators = "for operators"
		got := conversation.UserView([]conversation.Event{conversation.NewSystemNotice(code, operators)})
		if len(got) != 1 || got[0].SystemNotice == nil || got[0].SystemNotice.Code != code ||
			got[0].SystemNotice.Text == "" || got[0].SystemNotice.Text == operators {
			t.Errorf("notice %q in the user's view: %+v; want it, with a text for people", code, got)
		}
	}
}
