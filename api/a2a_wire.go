package api

import (
	"encoding/json"
)

// The A2A protocol (v1.0) on the wire, as its JSON-RPC binding carries it:
// ProtoJSON of specification/a2a.proto (camelCase fields, enum names such
// as TASK_STATE_WORKING and ROLE_AGENT, parts told apart by which of text,
// data, url or raw they hold).

// a2aVersion is the version of the protocol served.
const a2aVersion = "1.0"

// The task states of A2A a process's state maps to (a2a_task.go).
const (
	taskSubmitted     = "TASK_STATE_SUBMITTED"
	taskWorking       = "TASK_STATE_WORKING"
	taskInputRequired = "TASK_STATE_INPUT_REQUIRED"
	taskCompleted     = "TASK_STATE_COMPLETED"
	taskFailed        = "TASK_STATE_FAILED"
	taskCanceled      = "TASK_STATE_CANCELED"
)

// The roles of A2A messages.
const (
	roleUser  = "ROLE_USER"
	roleAgent = "ROLE_AGENT"
)

// The error codes of A2A's JSON-RPC binding (specification §5.4, §9.5).
const (
	rpcParseError             = -32700
	rpcInvalidRequest         = -32600
	rpcMethodNotFound         = -32601
	rpcInvalidParams          = -32602
	rpcInternal               = -32603
	rpcTaskNotFound           = -32001
	rpcTaskNotCancelable      = -32002
	rpcPushNotSupported       = -32003
	rpcUnsupportedOperation   = -32004
	rpcContentTypeUnsupported = -32005
	rpcExtendedCardAbsent     = -32007
	rpcVersionNotSupported    = -32009
)

// rpcRequest is a JSON-RPC 2.0 request.
type rpcRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
}

// rpcResponse is a JSON-RPC 2.0 response: a result or an error.
type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

// rpcError is a JSON-RPC error; it is also the error type of the A2A
// methods, which the dispatcher writes as it is.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *rpcError) Error() string { return e.Message }

// a2aPart is a part of a message or an artifact: exactly one of Text,
// Data, URL and Raw.
type a2aPart struct {
	Text      *string         `json:"text,omitempty"`
	Data      json.RawMessage `json:"data,omitempty"`
	URL       *string         `json:"url,omitempty"`
	Raw       *string         `json:"raw,omitempty"`
	Filename  string          `json:"filename,omitempty"`
	MediaType string          `json:"mediaType,omitempty"`
	Metadata  map[string]any  `json:"metadata,omitempty"`
}

func textPart(s string) a2aPart { return a2aPart{Text: &s} }

// a2aMessage is a message of A2A.
type a2aMessage struct {
	MessageID        string         `json:"messageId"`
	ContextID        string         `json:"contextId,omitempty"`
	TaskID           string         `json:"taskId,omitempty"`
	Role             string         `json:"role"`
	Parts            []a2aPart      `json:"parts"`
	Metadata         map[string]any `json:"metadata,omitempty"`
	Extensions       []string       `json:"extensions,omitempty"`
	ReferenceTaskIDs []string       `json:"referenceTaskIds,omitempty"`
}

type a2aTaskStatus struct {
	State     string      `json:"state"`
	Message   *a2aMessage `json:"message,omitempty"`
	Timestamp string      `json:"timestamp,omitempty"`
}

type a2aArtifact struct {
	ArtifactID  string         `json:"artifactId"`
	Name        string         `json:"name,omitempty"`
	Description string         `json:"description,omitempty"`
	Parts       []a2aPart      `json:"parts"`
	Metadata    map[string]any `json:"metadata,omitempty"`
}

type a2aTask struct {
	ID        string         `json:"id"`
	ContextID string         `json:"contextId"`
	Status    a2aTaskStatus  `json:"status"`
	Artifacts []a2aArtifact  `json:"artifacts,omitempty"`
	History   []a2aMessage   `json:"history,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

type a2aStatusUpdate struct {
	TaskID    string        `json:"taskId"`
	ContextID string        `json:"contextId"`
	Status    a2aTaskStatus `json:"status"`
}

type a2aArtifactUpdate struct {
	TaskID    string      `json:"taskId"`
	ContextID string      `json:"contextId"`
	Artifact  a2aArtifact `json:"artifact"`
	LastChunk bool        `json:"lastChunk,omitempty"`
}

// a2aStreamResponse is one event of a stream: one of its fields.
type a2aStreamResponse struct {
	Task           *a2aTask           `json:"task,omitempty"`
	Message        *a2aMessage        `json:"message,omitempty"`
	StatusUpdate   *a2aStatusUpdate   `json:"statusUpdate,omitempty"`
	ArtifactUpdate *a2aArtifactUpdate `json:"artifactUpdate,omitempty"`
}

// a2aSendParams are the params of SendMessage and SendStreamingMessage.
type a2aSendParams struct {
	Tenant        string         `json:"tenant,omitempty"`
	Message       *a2aMessage    `json:"message"`
	Configuration *a2aSendConfig `json:"configuration,omitempty"`
	Metadata      map[string]any `json:"metadata,omitempty"`
}

type a2aSendConfig struct {
	AcceptedOutputModes []string `json:"acceptedOutputModes,omitempty"`
	HistoryLength       *int     `json:"historyLength,omitempty"`
	ReturnImmediately   bool     `json:"returnImmediately,omitempty"`
	// TaskPushNotificationConfig is refused: push is not supported.
	TaskPushNotificationConfig json.RawMessage `json:"taskPushNotificationConfig,omitempty"`
}

// a2aTaskParams are the params of GetTask, CancelTask and SubscribeToTask.
type a2aTaskParams struct {
	Tenant        string         `json:"tenant,omitempty"`
	ID            string         `json:"id"`
	HistoryLength *int           `json:"historyLength,omitempty"`
	Metadata      map[string]any `json:"metadata,omitempty"`
}

type a2aListParams struct {
	Tenant               string `json:"tenant,omitempty"`
	ContextID            string `json:"contextId,omitempty"`
	Status               string `json:"status,omitempty"`
	PageSize             *int   `json:"pageSize,omitempty"`
	PageToken            string `json:"pageToken,omitempty"`
	HistoryLength        *int   `json:"historyLength,omitempty"`
	StatusTimestampAfter string `json:"statusTimestampAfter,omitempty"`
	IncludeArtifacts     bool   `json:"includeArtifacts,omitempty"`
}

type a2aListResult struct {
	Tasks         []a2aTask `json:"tasks"`
	NextPageToken string    `json:"nextPageToken"`
	PageSize      int       `json:"pageSize"`
	TotalSize     int       `json:"totalSize"`
}

// The agent card (a2a.proto AgentCard), in the JSON Schema shape the SDK's
// card resolver reads as it is.
type agentCard struct {
	Name                string            `json:"name"`
	Description         string            `json:"description"`
	SupportedInterfaces []agentInterface  `json:"supportedInterfaces"`
	Version             string            `json:"version"`
	Capabilities        agentCapabilities `json:"capabilities"`
	SecuritySchemes     map[string]any    `json:"securitySchemes,omitempty"`
	Security            []any             `json:"securityRequirements,omitempty"`
	DefaultInputModes   []string          `json:"defaultInputModes"`
	DefaultOutputModes  []string          `json:"defaultOutputModes"`
	Skills              []agentSkill      `json:"skills"`
}

type agentInterface struct {
	URL             string `json:"url"`
	ProtocolBinding string `json:"protocolBinding"`
	ProtocolVersion string `json:"protocolVersion"`
}

type agentCapabilities struct {
	Streaming         bool `json:"streaming"`
	PushNotifications bool `json:"pushNotifications"`
}

type agentSkill struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Tags        []string `json:"tags"`
	Examples    []string `json:"examples,omitempty"`
}

// agentCardList is the body of /.well-known/agent-card.json: the card of
// every exposed recipe.
type agentCardList struct {
	Agents []agentCard `json:"agents"`
}
