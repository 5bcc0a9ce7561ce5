package conversation_test

import (
	"testing"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/engines/rounds"
	"github.com/engine-brain/brain/engines/vogon"
)

// Every notice the round loop and the node write has a text of its own for
// the user, not the generic one.
func TestUserNoticeTextKnowsEveryNotice(t *testing.T) {
	t.Parallel()
	generic := conversation.UserNoticeText("no such code")
	for _, code := range []string{
		rounds.NoticeMaxRounds, rounds.NoticeTimeout, rounds.NoticeModelError, rounds.NoticeEmptyAnswer,
		rounds.NoticeModelAuth, rounds.NoticeModelPayload, rounds.NoticeTokenBudget, rounds.NoticeDayTokenBudget,
		rounds.NoticeHalted, "turn_failed", // internal/node/turn.go
		vogon.NoticeGateFailed,
	} {
		if conversation.UserNoticeText(code) == generic {
			t.Errorf("notice %q has no text for the user", code)
		}
	}
}
