package api

import "encoding/json"

// The JSON of the OpenAI-compatible face (openai.go): the shapes of
// OpenAI's Responses and Chat Completions APIs that the official SDKs
// decode, with only the fields brain fills or the SDKs require.

// oaiResponse is a Responses API response object.
type oaiResponse struct {
	ID                 string             `json:"id"`
	Object             string             `json:"object"` // "response"
	CreatedAt          int64              `json:"created_at"`
	Status             string             `json:"status"`
	Error              *oaiResponseError  `json:"error"`
	IncompleteDetails  *oaiIncomplete     `json:"incomplete_details"`
	Instructions       *string            `json:"instructions"`
	Model              string             `json:"model"`
	Output             []oaiMessage       `json:"output"`
	ParallelToolCalls  bool               `json:"parallel_tool_calls"`
	PreviousResponseID *string            `json:"previous_response_id"`
	Conversation       *oaiConversationID `json:"conversation,omitempty"`
	Metadata           map[string]string  `json:"metadata"`
	Tools              []json.RawMessage  `json:"tools"`
	ToolChoice         string             `json:"tool_choice"`
	Temperature        *float64           `json:"temperature"`
	TopP               *float64           `json:"top_p"`
	Usage              *oaiUsage          `json:"usage"`
	// OutputText is the SDKs' convenience, which the Node SDK computes
	// itself; curl users get it here.
	OutputText string `json:"output_text"`
}

type oaiResponseError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// oaiIncomplete says why a response is incomplete: the state the process
// was left in by the turn (openai.go's incompleteReason).
type oaiIncomplete struct {
	Reason string `json:"reason"`
}

// oaiConversationID names the process a response belongs to.
type oaiConversationID struct {
	ID string `json:"id"`
}

// oaiMessage is an output message item.
type oaiMessage struct {
	ID      string       `json:"id"`
	Type    string       `json:"type"` // "message"
	Role    string       `json:"role"` // "assistant"
	Status  string       `json:"status"`
	Content []oaiOutText `json:"content"`
}

// oaiOutText is an output_text content part.
type oaiOutText struct {
	Type        string            `json:"type"` // "output_text"
	Text        string            `json:"text"`
	Annotations []json.RawMessage `json:"annotations"`
	Logprobs    []json.RawMessage `json:"logprobs"`
}

type oaiUsage struct {
	InputTokens         int64            `json:"input_tokens"`
	InputTokensDetails  oaiInputDetails  `json:"input_tokens_details"`
	OutputTokens        int64            `json:"output_tokens"`
	OutputTokensDetails oaiOutputDetails `json:"output_tokens_details"`
	TotalTokens         int64            `json:"total_tokens"`
}

type oaiInputDetails struct {
	CachedTokens int64 `json:"cached_tokens"`
}

type oaiOutputDetails struct {
	ReasoningTokens int64 `json:"reasoning_tokens"`
}

// oaiEvent is one event of a streamed response. Its fields are those of
// every event type that brain sends; each type sets its own.
type oaiEvent struct {
	Type           string       `json:"type"`
	SequenceNumber int64        `json:"sequence_number"`
	Response       *oaiResponse `json:"response,omitempty"`
	OutputIndex    *int         `json:"output_index,omitempty"`
	ContentIndex   *int         `json:"content_index,omitempty"`
	ItemID         string       `json:"item_id,omitempty"`
	Item           *oaiMessage  `json:"item,omitempty"`
	Part           *oaiOutText  `json:"part,omitempty"`
	Delta          *string      `json:"delta,omitempty"`
	Text           *string      `json:"text,omitempty"`
	// Logprobs is required on the text events (always empty here).
	Logprobs *[]json.RawMessage `json:"logprobs,omitempty"`
}

// oaiModel is an entry of GET /v1/models: a recipe.
type oaiModel struct {
	ID      string `json:"id"`
	Object  string `json:"object"` // "model"
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

type oaiModelList struct {
	Object string     `json:"object"` // "list"
	Data   []oaiModel `json:"data"`
}

// oaiChatCompletion is a Chat Completions response.
type oaiChatCompletion struct {
	ID      string          `json:"id"`
	Object  string          `json:"object"` // "chat.completion" or "chat.completion.chunk"
	Created int64           `json:"created"`
	Model   string          `json:"model"`
	Choices []oaiChatChoice `json:"choices"`
	Usage   *oaiChatUsage   `json:"usage,omitempty"`
}

type oaiChatChoice struct {
	Index        int             `json:"index"`
	Message      *oaiChatMessage `json:"message,omitempty"`
	Delta        *oaiChatMessage `json:"delta,omitempty"`
	FinishReason *string         `json:"finish_reason"`
	Logprobs     *struct{}       `json:"logprobs"`
}

type oaiChatMessage struct {
	Role    string  `json:"role,omitempty"`
	Content *string `json:"content,omitempty"`
	Refusal *string `json:"refusal,omitempty"`
}

type oaiChatUsage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	TotalTokens      int64 `json:"total_tokens"`
}

// oaiErrorBody is OpenAI's error shape, which the SDKs raise as their
// typed errors.
type oaiErrorBody struct {
	Error oaiErrorDetail `json:"error"`
}

type oaiErrorDetail struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    string  `json:"code"`
}
