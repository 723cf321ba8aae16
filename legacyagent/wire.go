package legacyagent

import "github.com/a2agate/gateway/internal/agentcore"

// The structs below spell the A2A 0.2.5 JSON-RPC wire exactly as the 0.2.5
// JSON schema (specification/json/a2a.json at tag v0.2.5) names it.

// Discriminator values of the 0.2.5 "kind" field.
const (
	kindMessage        = "message"
	kindTask           = "task"
	kindStatusUpdate   = "status-update"
	kindArtifactUpdate = "artifact-update"
	kindText           = "text"
	kindFile           = "file"
	kindData           = "data"
)

// Message roles.
const (
	roleUser  = "user"
	roleAgent = "agent"
)

// stateNames are the schema's TaskState names of the core's states. The
// agent never puts a task in "unknown".
var stateNames = map[agentcore.State]string{
	agentcore.StateSubmitted:     "submitted",
	agentcore.StateWorking:       "working",
	agentcore.StateInputRequired: "input-required",
	agentcore.StateAuthRequired:  "auth-required",
	agentcore.StateCompleted:     "completed",
	agentcore.StateCanceled:      "canceled",
	agentcore.StateFailed:        "failed",
	agentcore.StateRejected:      "rejected",
}

type message struct {
	Kind             string     `json:"kind"`
	MessageID        string     `json:"messageId"`
	Role             string     `json:"role"`
	Parts            []part     `json:"parts"`
	ContextID        string     `json:"contextId,omitempty"`
	TaskID           string     `json:"taskId,omitempty"`
	ReferenceTaskIDs []string   `json:"referenceTaskIds,omitempty"`
	Extensions       []string   `json:"extensions,omitempty"`
	Metadata         jsonObject `json:"metadata,omitempty"`
}

// part is the union of TextPart, FilePart and DataPart, told apart by Kind.
type part struct {
	Kind     string       `json:"kind"`
	Text     *string      `json:"text,omitempty"`
	File     *fileContent `json:"file,omitempty"`
	Data     jsonObject   `json:"data,omitempty"`
	Metadata jsonObject   `json:"metadata,omitempty"`
}

// fileContent is FileWithBytes or FileWithUri: exactly one of Bytes and URI.
type fileContent struct {
	Bytes    *string `json:"bytes,omitempty"`
	URI      *string `json:"uri,omitempty"`
	MimeType string  `json:"mimeType,omitempty"`
	Name     string  `json:"name,omitempty"`
}

// The Task, its status, artifacts and update events are spelled as in 1.0
// but for the "kind" each carries here, and the status update's "final".

type artifact = agentcore.Artifact[part]

type task struct {
	Kind string `json:"kind"`
	agentcore.WireTask[message, artifact]
}

type statusUpdateEvent struct {
	Kind string `json:"kind"`
	agentcore.StatusUpdate[message]
	// Final is required by the 0.2.5 schema, so it is written even when false.
	Final bool `json:"final"`
}

type artifactUpdateEvent struct {
	Kind string `json:"kind"`
	agentcore.ArtifactUpdate[artifact]
}

// pushConfig is the schema's PushNotificationConfig.
type pushConfig struct {
	ID             string    `json:"id,omitempty"`
	URL            string    `json:"url"`
	Token          string    `json:"token,omitempty"`
	Authentication *pushAuth `json:"authentication,omitempty"`
}

// pushAuth is the schema's PushNotificationAuthenticationInfo.
type pushAuth struct {
	Schemes     []string `json:"schemes"`
	Credentials string   `json:"credentials,omitempty"`
}

type taskPushConfig struct {
	TaskID                 string      `json:"taskId"`
	PushNotificationConfig *pushConfig `json:"pushNotificationConfig"`
}

// Method params (schema MessageSendParams, TaskQueryParams, ...).

type messageSendParams struct {
	Message       *message           `json:"message"`
	Configuration *sendConfiguration `json:"configuration"`
	Metadata      jsonObject         `json:"metadata"`
}

type sendConfiguration struct {
	// AcceptedOutputModes is required by the 0.2.5 schema; nil means absent.
	AcceptedOutputModes    []string    `json:"acceptedOutputModes"`
	HistoryLength          *int        `json:"historyLength"`
	Blocking               *bool       `json:"blocking"`
	PushNotificationConfig *pushConfig `json:"pushNotificationConfig"`
}

type taskQueryParams struct {
	ID            string     `json:"id"`
	HistoryLength *int       `json:"historyLength"`
	Metadata      jsonObject `json:"metadata"`
}

type taskIDParams struct {
	ID       string     `json:"id"`
	Metadata jsonObject `json:"metadata"`
}

// pushConfigParams serves get, list and delete: 0.2.5 names the task "id"
// and the config "pushNotificationConfigId".
type pushConfigParams struct {
	ID                       string     `json:"id"`
	PushNotificationConfigID string     `json:"pushNotificationConfigId"`
	Metadata                 jsonObject `json:"metadata"`
}

// The fields each request requires.

func (r taskPushConfig) Check() error   { return agentcore.Require("taskId", r.TaskID) }
func (r taskQueryParams) Check() error  { return agentcore.Require("id", r.ID) }
func (r taskIDParams) Check() error     { return agentcore.Require("id", r.ID) }
func (r pushConfigParams) Check() error { return agentcore.Require("id", r.ID) }

// jsonObject is metadata and DataPart.data, which the schema types as
// "object".
type jsonObject = agentcore.JSONObject
