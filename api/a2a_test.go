package api

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/lifecycle"
	"github.com/engine-brain/brain/store"
)

// rpc posts a JSON-RPC body to the default recipe's A2A endpoint.
func (b *bundle) rpc(t *testing.T, token string, header map[string]string, body string) rpcResponse {
	t.Helper()
	w := b.do("POST", "/a2a/default", token, header, body)
	if w.Code != http.StatusOK {
		t.Fatalf("status %d, want 200: %s", w.Code, w.Body)
	}
	if got := w.Header().Get("A2A-Version"); got != "1.0" {
		t.Errorf("A2A-Version header %q, want 1.0", got)
	}
	var resp rpcResponse
	if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil {
		t.Fatalf("not a JSON-RPC response: %v: %s", err, w.Body)
	}
	return resp
}

func TestA2AErrors(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tests := []struct {
		name   string
		token  string
		header map[string]string
		body   string
		code   int
		in     string // a part of the message
	}{
		{name: "parse error", body: `{"jsonrpc": "2.0", "id": 1, `, code: rpcParseError, in: "invalid JSON"},
		{name: "not an object", body: `[1, 2]`, code: rpcParseError},
		{name: "not JSON-RPC 2.0", body: `{"jsonrpc": "1.0", "id": 1, "method": "GetTask"}`, code: rpcInvalidRequest},
		{name: "unknown method", body: `{"jsonrpc": "2.0", "id": 1, "method": "FlyAway", "params": {}}`, code: rpcMethodNotFound, in: "FlyAway"},
		{name: "legacy method", body: `{"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {}}`, code: rpcVersionNotSupported, in: "SendMessage"},
		{name: "unsupported version", header: map[string]string{"A2A-Version": "0.3"},
			body: `{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "p_alice"}}`, code: rpcVersionNotSupported, in: "1.0"},
		{name: "params missing", body: `{"jsonrpc": "2.0", "id": 1, "method": "GetTask"}`, code: rpcInvalidParams, in: "params"},
		{name: "params of the wrong type", body: `{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": 7}}`, code: rpcInvalidParams, in: "params.id"},
		{name: "no task id", body: `{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {}}`, code: rpcInvalidParams, in: "params.id"},
		{name: "task not found", body: `{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "p_nope"}}`, code: rpcTaskNotFound},
		{name: "another user's task", body: `{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "p_bob"}}`, code: rpcTaskNotFound},
		{name: "message without parts", body: `{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {"messageId": "m1", "role": "ROLE_USER", "parts": []}}}`,
			code: rpcInvalidParams, in: "parts"},
		{name: "message of the agent", body: `{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {"messageId": "m1", "role": "ROLE_AGENT", "parts": [{"text": "hi"}]}}}`,
			code: rpcInvalidParams, in: "role"},
		{name: "file part", body: `{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"url": "https://x"}]}}}`,
			code: rpcContentTypeUnsupported},
		{name: "message to an ended task", body: `{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {"messageId": "m1", "taskId": "p_done", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}}`,
			code: rpcUnsupportedOperation},
		{name: "cancel an ended task", body: `{"jsonrpc": "2.0", "id": 1, "method": "CancelTask", "params": {"id": "p_done"}}`, code: rpcTaskNotCancelable},
		{name: "subscribe to an ended task", body: `{"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask", "params": {"id": "p_failed"}}`, code: rpcUnsupportedOperation},
		{name: "list with a bad state", body: `{"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {"status": "TASK_STATE_NAPPING"}}`, code: rpcInvalidParams, in: "status"},
		{name: "push", body: `{"jsonrpc": "2.0", "id": 1, "method": "CreateTaskPushNotificationConfig", "params": {}}`, code: rpcPushNotSupported},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			token := tt.token
			if token == "" {
				token = tokAlice
			}
			resp := b.rpc(t, token, tt.header, tt.body)
			if resp.Error == nil {
				t.Fatalf("no error, want code %d: %+v", tt.code, resp.Result)
			}
			if resp.Error.Code != tt.code || !strings.Contains(resp.Error.Message, tt.in) {
				t.Errorf("error %d %q, want code %d with %q", resp.Error.Code, resp.Error.Message, tt.code, tt.in)
			}
		})
	}
}

func TestA2ACards(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.do("GET", "/a2a/default/.well-known/agent-card.json", "", nil, "")
	if w.Code != http.StatusOK {
		t.Fatalf("card: status %d: %s", w.Code, w.Body)
	}
	var card agentCard
	if err := json.Unmarshal(w.Body.Bytes(), &card); err != nil {
		t.Fatal(err)
	}
	if card.Name != "default" || len(card.Skills) != 1 || card.Skills[0].ID != "chat" ||
		len(card.SupportedInterfaces) != 1 || !strings.HasSuffix(card.SupportedInterfaces[0].URL, "/a2a/default") ||
		card.SupportedInterfaces[0].ProtocolBinding != "JSONRPC" || !card.Capabilities.Streaming || card.SecuritySchemes == nil {
		t.Errorf("card %+v", card)
	}
	if w := b.do("GET", "/a2a/web-research/.well-known/agent-card.json", "", nil, ""); w.Code != http.StatusNotFound || !strings.Contains(w.Body.String(), "expose: true") {
		t.Errorf("a recipe not exposed: %d %s, want 404 that says how to expose it", w.Code, w.Body)
	}
	if w := b.do("POST", "/a2a/web-research", tokAlice, nil, `{}`); w.Code != http.StatusNotFound {
		t.Errorf("the endpoint of a recipe not exposed: %d, want 404", w.Code)
	}
	if w := b.do("POST", "/a2a/default", "", nil, `{}`); w.Code != http.StatusUnauthorized {
		t.Errorf("the endpoint without a token: %d, want 401", w.Code)
	}
	w = b.do("GET", "/.well-known/agent-card.json", "", nil, "")
	var list agentCardList
	if err := json.Unmarshal(w.Body.Bytes(), &list); err != nil || w.Code != 200 {
		t.Fatalf("list: %d %v", w.Code, err)
	}
	var names []string
	for _, c := range list.Agents {
		names = append(names, c.Name)
	}
	if strings.Join(names, ",") != "default,ford" {
		t.Errorf("listed agents %v, want default and ford (which extends it)", names)
	}
}

func TestA2ATask(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.fake.appendEvents("p_alice",
		conversation.Event{Type: conversation.TypeInboxMessage, InboxMessage: &conversation.InboxMessage{MessageID: "i1", Kind: conversation.KindUser, Content: "hello"}},
		conversation.NewTurnStart("wake"),
		conversation.Event{Type: conversation.TypeToolCallResponse, Turn: "t1", ToolCallResponse: &conversation.ToolCallResponse{CallID: "c1", Name: "respond",
			Content: []conversation.Block{conversation.MarkdownBlock("Which city?").For(conversation.RoleUser)}}},
	)
	resp := b.rpc(t, tokAlice, map[string]string{"A2A-Version": "1.0"}, `{"jsonrpc": "2.0", "id": "x", "method": "GetTask", "params": {"id": "p_alice"}}`)
	if resp.Error != nil {
		t.Fatal(resp.Error)
	}
	raw, _ := json.Marshal(resp.Result)
	var task a2aTask
	if err := json.Unmarshal(raw, &task); err != nil {
		t.Fatal(err)
	}
	if task.ID != "p_alice" || task.Status.State != taskInputRequired || task.Status.Message == nil ||
		*task.Status.Message.Parts[0].Text != "Which city?" || len(task.History) != 2 || task.History[0].Role != roleUser {
		t.Errorf("task %s", raw)
	}
	if string(resp.ID) != `"x"` {
		t.Errorf("id %s, want the request's", resp.ID)
	}

	// Cancel: the owner may stop her task; it is canceled, not completed.
	resp = b.rpc(t, tokAlice, nil, `{"jsonrpc": "2.0", "id": 2, "method": "CancelTask", "params": {"id": "p_alice"}}`)
	raw, _ = json.Marshal(resp.Result)
	if resp.Error != nil || !strings.Contains(string(raw), taskCanceled) {
		t.Errorf("cancel: %v %s", resp.Error, raw)
	}
	if rec, _ := b.fake.Get(t.Context(), "p_alice"); rec.Status.State != lifecycle.Done {
		t.Errorf("after cancel the process is %s, want DONE", rec.Status.State)
	}
}

// A task that waits for input shows its newest turn's answer; a turn that
// ended with none (its model failed, say) shows no message, never an
// older turn's answer as if it were new.
func TestA2AStatusMessageIsTheTurnsOwn(t *testing.T) {
	t.Parallel()
	turn := func(id, answer string) []conversation.Event {
		start := conversation.NewTurnStart("wake")
		start.ID = id + "-1"
		evs := []conversation.Event{start}
		if answer != "" {
			msg := conversation.NewChatMessage(answer)
			msg.ID = id + "-2"
			evs = append(evs, msg)
		}
		return evs
	}
	rec := store.Record{ID: "p1", Status: lifecycle.Status{State: lifecycle.Blocked}}
	tl := newTaskLog("p1")
	tl.add(turn("1", "First answer."))
	if m := tl.status(rec).Message; m == nil || m.Parts[0].Text == nil || *m.Parts[0].Text != "First answer." {
		t.Fatalf("after an answered turn: status message %+v, want the answer", m)
	}
	tl.add(turn("2", ""))
	if m := tl.status(rec).Message; m != nil {
		t.Errorf("after a turn without an answer: status message %+v, want none", m)
	}
}
