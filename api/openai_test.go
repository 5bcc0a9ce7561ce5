package api

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/engine-brain/brain"
	"github.com/engine-brain/brain/conversation"
	"github.com/engine-brain/brain/internal/testutil"
	"github.com/engine-brain/brain/llm"
	"github.com/engine-brain/brain/recipes"
)

// echoModel answers the last user message with respond("You said: ..."),
// its arguments streamed in two pieces; with gate set it holds between
// them until gate is closed. Each call uses 10 input and 5 output tokens.
type echoModel struct{ gate chan struct{} }

func (m echoModel) Generate(ctx context.Context, req *llm.Request) iter.Seq2[llm.Part, error] {
	var last string
	for _, msg := range req.Messages {
		if msg.Role == conversation.MessageUser && len(msg.Content) > 0 {
			last = msg.Content[0].Text
		}
	}
	text, _ := json.Marshal("You said: " + last)
	args := `{"message": ` + string(text) + `, "awaiting_user_input": true}`
	cut := len(`{"message": "You said`)
	return func(yield func(llm.Part, error) bool) {
		piece := func(frag string) bool {
			return yield(llm.Part{Kind: llm.PartToolArgs, ToolCall: &conversation.ToolCall{ID: "c1", Name: "respond", Arguments: json.RawMessage(frag)}}, nil)
		}
		if !piece(args[:cut]) {
			return
		}
		if m.gate != nil {
			select {
			case <-m.gate:
			case <-ctx.Done():
				yield(llm.Part{}, ctx.Err())
				return
			}
		}
		_ = piece(args[cut:]) &&
			yield(llm.Part{Kind: llm.PartToolCall, ToolCall: &conversation.ToolCall{ID: "c1", Name: "respond", Arguments: json.RawMessage(args)}}, nil) &&
			yield(llm.Part{Kind: llm.PartUsage, Usage: &llm.Usage{InputTokens: 10, OutputTokens: 5}}, nil)
	}
}

// oaiSetup starts a node on a real Redis with model answering every
// recipe, and the API on it with the users ada and bob; it returns the
// API's base URL.
func oaiSetup(t *testing.T, model llm.Model) string {
	t.Helper()
	node, err := brain.New(brain.Config{Redis: testutil.Redis(t), Models: map[string]llm.Model{"default": model}, Recipes: recipes.Builtin()})
	if err != nil {
		t.Fatal(err)
	}
	if err := node.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = node.Stop(context.Background()) })
	srv, err := New(Config{Backend: node, Tokens: []Token{
		{Name: "ada", Role: RoleUser, SHA256: HashToken("tok-ada")},
		{Name: "bob", Role: RoleUser, SHA256: HashToken("tok-bob")},
	}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return ts.URL
}

func oaiClient(base, token string) openai.Client {
	return openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey(token), option.WithMaxRetries(0))
}

// wantOAIError checks that err is the SDK's error of status and param.
func wantOAIError(t *testing.T, what string, err error, status int, param string) {
	t.Helper()
	var e *openai.Error
	if !errors.As(err, &e) {
		t.Fatalf("%s: err = %v, want an *openai.Error", what, err)
	}
	if e.StatusCode != status || e.Param != param || e.Message == "" {
		t.Errorf("%s: %d param %q %q; want %d param %q with a message", what, e.StatusCode, e.Param, e.Message, status, param)
	}
}

// openai-go creates a response from a recipe, continues its process with
// previous_response_id, gets the same response again with the same
// Idempotency-Key, and gets the SDK's errors for what brain refuses.
func TestOpenAIResponses(t *testing.T) {
	t.Parallel()
	base := oaiSetup(t, echoModel{})
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	ada := oaiClient(base, "tok-ada")

	models, err := ada.Models.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range models.Data {
		names = append(names, m.ID)
	}
	if !strings.Contains(","+strings.Join(names, ",")+",", ",default,") {
		t.Errorf("models = %v, want the recipes, default among them", names)
	}

	var httpResp *http.Response
	first, err := ada.Responses.New(ctx, responses.ResponseNewParams{Model: "brain:default",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Hello")}},
		option.WithHeader("Idempotency-Key", "k1"), option.WithResponseInto(&httpResp))
	if err != nil {
		t.Fatal(err)
	}
	pid := httpResp.Header.Get(processHeader)
	type summary struct {
		Status, Text, Process, Previous string
		In, Out, Total                  int64
	}
	sum := func(r *responses.Response) summary {
		return summary{Status: string(r.Status), Text: r.OutputText(), Process: r.Conversation.ID, Previous: r.PreviousResponseID,
			In: r.Usage.InputTokens, Out: r.Usage.OutputTokens, Total: r.Usage.TotalTokens}
	}
	if diff := cmp.Diff(summary{Status: "completed", Text: "You said: Hello", Process: pid, In: 10, Out: 5, Total: 15}, sum(first)); diff != "" || pid == "" {
		t.Errorf("first response (-want +got):\n%s", diff)
	}

	next, err := ada.Responses.New(ctx, responses.ResponseNewParams{PreviousResponseID: openai.String(first.ID),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Again")}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(summary{Status: "completed", Text: "You said: Again", Process: pid, Previous: first.ID, In: 10, Out: 5, Total: 15}, sum(next)); diff != "" {
		t.Errorf("continued response (-want +got):\n%s", diff)
	}
	if next.ID == first.ID {
		t.Errorf("the continued response has the first one's id %s", first.ID)
	}

	again, err := ada.Responses.New(ctx, responses.ResponseNewParams{Model: "brain:default",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Hello")}}, option.WithHeader("Idempotency-Key", "k1"))
	if err != nil {
		t.Fatal(err)
	}
	if again.ID != first.ID || again.OutputText() != first.OutputText() {
		t.Errorf("repeated with its Idempotency-Key: %s %q; want the first response %s %q", again.ID, again.OutputText(), first.ID, first.OutputText())
	}

	bob := oaiClient(base, "tok-bob")
	_, err = bob.Responses.New(ctx, responses.ResponseNewParams{PreviousResponseID: openai.String(first.ID),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Mine now")}})
	wantOAIError(t, "another user's previous_response_id", err, 404, "previous_response_id")
	_, err = ada.Responses.New(ctx, responses.ResponseNewParams{Model: "no-such-recipe",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Hi")}})
	wantOAIError(t, "an unknown model", err, 404, "model")
	_, err = ada.Responses.New(ctx, responses.ResponseNewParams{Model: "default",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Hi")},
		Tools: []responses.ToolUnionParam{{OfWebSearch: &responses.WebSearchToolParam{Type: responses.WebSearchToolTypeWebSearch}}}})
	wantOAIError(t, "tools from the client", err, 400, "tools")
	_, err = ada.Responses.New(ctx, responses.ResponseNewParams{Model: "default",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("  ")}})
	wantOAIError(t, "a blank input", err, 400, "input")
	_, err = ada.Responses.New(ctx, responses.ResponseNewParams{Model: "default"}, option.WithJSONSet("colour", "blue"),
		option.WithJSONSet("input", "Hi"))
	wantOAIError(t, "an unknown parameter", err, 400, "colour")
	wrong := oaiClient(base, "wrong")
	_, err = wrong.Models.List(ctx)
	wantOAIError(t, "a wrong token", err, 401, "")
}

// A streamed response carries the answer as the turn writes it: the first
// delta arrives while the model still holds the rest, and the events come
// in the order the SDKs expect, the deltas joined making the final text.
func TestOpenAIResponsesStream(t *testing.T) {
	t.Parallel()
	gate := make(chan struct{})
	base := oaiSetup(t, echoModel{gate: gate})
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	ada := oaiClient(base, "tok-ada")

	stream := ada.Responses.NewStreaming(ctx, responses.ResponseNewParams{Model: "default",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Stream it")}})
	defer stream.Close()
	var (
		types  []string
		joined string
		final  responses.Response
		seq    int64
	)
	for stream.Next() {
		ev := stream.Current()
		if ev.SequenceNumber != seq {
			t.Errorf("event %s has sequence_number %d, want %d", ev.Type, ev.SequenceNumber, seq)
		}
		seq++
		if len(types) == 0 || types[len(types)-1] != ev.Type {
			types = append(types, ev.Type)
		}
		switch ev.Type {
		case "response.output_text.delta":
			if joined == "" {
				close(gate) // the first delta came while the model held the rest
			}
			joined += ev.Delta
		case "response.completed":
			final = ev.Response
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	want := []string{"response.created", "response.in_progress", "response.output_item.added", "response.content_part.added",
		"response.output_text.delta", "response.output_text.done", "response.content_part.done", "response.output_item.done", "response.completed"}
	if diff := cmp.Diff(want, types); diff != "" {
		t.Errorf("event types (-want +got):\n%s", diff)
	}
	if joined != "You said: Stream it" || final.OutputText() != joined || final.Status != "completed" || final.Usage.TotalTokens != 15 {
		t.Errorf("deltas %q, final %q %s %+v; want the answer in both, completed", joined, final.OutputText(), final.Status, final.Usage)
	}
}

// openai-go's chat completion goes to a new process, then, named by the
// X-Brain-Process header its answer had, to the same one.
func TestOpenAIChatCompletions(t *testing.T) {
	t.Parallel()
	base := oaiSetup(t, echoModel{})
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	ada := oaiClient(base, "tok-ada")
	var httpResp *http.Response
	first, err := ada.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "default",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("ignored"), openai.UserMessage("One")}}, option.WithResponseInto(&httpResp))
	if err != nil {
		t.Fatal(err)
	}
	pid := httpResp.Header.Get(processHeader)
	if first.Choices[0].Message.Content != "You said: One" || first.Usage.TotalTokens != 15 || pid == "" {
		t.Errorf("first completion %q %+v, process %q", first.Choices[0].Message.Content, first.Usage, pid)
	}
	next, err := ada.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "default", User: openai.String(pid),
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("One"), openai.AssistantMessage("You said: One"), openai.UserMessage("Two")}},
		option.WithResponseInto(&httpResp))
	if err != nil {
		t.Fatal(err)
	}
	if next.Choices[0].Message.Content != "You said: Two" || httpResp.Header.Get(processHeader) != pid {
		t.Errorf("continued completion %q of process %q, want of %q", next.Choices[0].Message.Content, httpResp.Header.Get(processHeader), pid)
	}
	_, err = ada.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "default",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("only a system message")}})
	wantOAIError(t, "no user message", err, 400, "messages")
}

// openai-go's streamed chat completion: the role, the answer's deltas, the
// finish reason with the usage; the deltas joined are the answer.
func TestOpenAIChatCompletionsStream(t *testing.T) {
	t.Parallel()
	base := oaiSetup(t, echoModel{})
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	ada := oaiClient(base, "tok-ada")
	stream := ada.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{Model: "brain:default",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Stream this")}})
	var acc openai.ChatCompletionAccumulator
	chunks := 0
	for stream.Next() {
		acc.AddChunk(stream.Current())
		chunks++
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if len(acc.Choices) != 1 || acc.Choices[0].Message.Content != "You said: Stream this" || acc.Choices[0].FinishReason != "stop" ||
		acc.Usage.TotalTokens != 15 || chunks < 3 {
		t.Errorf("streamed completion: %+v over %d chunks; want the answer, stop, 15 tokens, at least 3 chunks", acc.ChatCompletion, chunks)
	}
}
