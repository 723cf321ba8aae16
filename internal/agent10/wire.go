package agent10

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"

	"github.com/a2agate/gateway/internal/agentcore"
)

// The structs below spell the A2A 1.0 JSON-RPC wire: the messages of
// specification/a2a.proto (package lf.a2a.v1, tag v1.0.1) as ProtoJSON
// writes them, with lowerCamelCase keys, enum names as strings and no value
// written for an unset field.

// Role names.
const (
	roleUser  = "ROLE_USER"
	roleAgent = "ROLE_AGENT"
)

// stateUnspecified is the TaskState zero value: never a task's state, it
// filters nothing in ListTasks.
const stateUnspecified = "TASK_STATE_UNSPECIFIED"

// stateNames are the TaskState names of the core's states.
var stateNames = map[agentcore.State]string{
	agentcore.StateSubmitted:     "TASK_STATE_SUBMITTED",
	agentcore.StateWorking:       "TASK_STATE_WORKING",
	agentcore.StateCompleted:     "TASK_STATE_COMPLETED",
	agentcore.StateFailed:        "TASK_STATE_FAILED",
	agentcore.StateCanceled:      "TASK_STATE_CANCELED",
	agentcore.StateInputRequired: "TASK_STATE_INPUT_REQUIRED",
	agentcore.StateRejected:      "TASK_STATE_REJECTED",
	agentcore.StateAuthRequired:  "TASK_STATE_AUTH_REQUIRED",
}

type message struct {
	MessageID        string     `json:"messageId"`
	ContextID        string     `json:"contextId,omitempty"`
	TaskID           string     `json:"taskId,omitempty"`
	Role             string     `json:"role"`
	Parts            []part     `json:"parts"`
	Metadata         jsonObject `json:"metadata,omitempty"`
	Extensions       []string   `json:"extensions,omitempty"`
	ReferenceTaskIDs []string   `json:"referenceTaskIds,omitempty"`
}

// part is the Part message: exactly one of Text, Raw, URL and Data (the
// "content" oneof), which is why each is a pointer or raw JSON.
type part struct {
	Text *string     `json:"text,omitempty"`
	Raw  *protoBytes `json:"raw,omitempty"`
	URL  *string     `json:"url,omitempty"`
	// Data is a google.protobuf.Value: any JSON value, null included.
	Data      json.RawMessage `json:"data,omitempty"`
	Metadata  jsonObject      `json:"metadata,omitempty"`
	Filename  string          `json:"filename,omitempty"`
	MediaType string          `json:"mediaType,omitempty"`
}

// The Task, its status, artifacts and update events are spelled as in
// 0.2.5, without its "kind" and "final".
type (
	task                = agentcore.WireTask[message, artifact]
	artifact            = agentcore.Artifact[part]
	statusUpdateEvent   = agentcore.StatusUpdate[message]
	artifactUpdateEvent = agentcore.ArtifactUpdate[artifact]
)

// streamResponse is the StreamResponse oneof: exactly one field is set.
type streamResponse struct {
	Task           *task                `json:"task,omitempty"`
	Message        *message             `json:"message,omitempty"`
	StatusUpdate   *statusUpdateEvent   `json:"statusUpdate,omitempty"`
	ArtifactUpdate *artifactUpdateEvent `json:"artifactUpdate,omitempty"`
}

// sendMessageResponse is the SendMessageResponse oneof.
type sendMessageResponse struct {
	Task    *task    `json:"task,omitempty"`
	Message *message `json:"message,omitempty"`
}

// pushConfig is the flat TaskPushNotificationConfig.
type pushConfig struct {
	Tenant         string              `json:"tenant,omitempty"`
	ID             string              `json:"id,omitempty"`
	TaskID         string              `json:"taskId,omitempty"`
	URL            string              `json:"url"`
	Token          string              `json:"token,omitempty"`
	Authentication *authenticationInfo `json:"authentication,omitempty"`
}

type authenticationInfo struct {
	Scheme      string `json:"scheme"`
	Credentials string `json:"credentials,omitempty"`
}

// Request messages. Fields the agent ignores (tenant) are declared all the
// same: the strict decoder rejects every key without a field.

type sendMessageRequest struct {
	Tenant        string             `json:"tenant"`
	Message       *message           `json:"message"`
	Configuration *sendConfiguration `json:"configuration"`
	Metadata      jsonObject         `json:"metadata"`
}

type sendConfiguration struct {
	AcceptedOutputModes        []string    `json:"acceptedOutputModes"`
	TaskPushNotificationConfig *pushConfig `json:"taskPushNotificationConfig"`
	HistoryLength              *int32      `json:"historyLength"`
	ReturnImmediately          bool        `json:"returnImmediately"`
}

type getTaskRequest struct {
	Tenant        string `json:"tenant"`
	ID            string `json:"id"`
	HistoryLength *int32 `json:"historyLength"`
}

type listTasksRequest struct {
	Tenant               string `json:"tenant"`
	ContextID            string `json:"contextId"`
	Status               string `json:"status"`
	PageSize             *int32 `json:"pageSize"`
	PageToken            string `json:"pageToken"`
	HistoryLength        *int32 `json:"historyLength"`
	StatusTimestampAfter string `json:"statusTimestampAfter"`
	IncludeArtifacts     bool   `json:"includeArtifacts"`
}

type listTasksResponse struct {
	Tasks []task `json:"tasks"`
	// NextPageToken, PageSize and TotalSize are REQUIRED in the proto, so
	// they are written even at their zero values.
	NextPageToken string `json:"nextPageToken"`
	PageSize      int32  `json:"pageSize"`
	TotalSize     int32  `json:"totalSize"`
}

type cancelTaskRequest struct {
	Tenant   string     `json:"tenant"`
	ID       string     `json:"id"`
	Metadata jsonObject `json:"metadata"`
}

type subscribeToTaskRequest struct {
	Tenant string `json:"tenant"`
	ID     string `json:"id"`
}

// pushConfigRequest is GetTaskPushNotificationConfigRequest and
// DeleteTaskPushNotificationConfigRequest: 1.0 names the task "taskId" and
// the config "id".
type pushConfigRequest struct {
	Tenant string `json:"tenant"`
	TaskID string `json:"taskId"`
	ID     string `json:"id"`
}

type listPushConfigsRequest struct {
	Tenant    string `json:"tenant"`
	TaskID    string `json:"taskId"`
	PageSize  int32  `json:"pageSize"`
	PageToken string `json:"pageToken"`
}

type listPushConfigsResponse struct {
	Configs []pushConfig `json:"configs"`
	// NextPageToken is written even when empty, as the Python SDK does.
	NextPageToken string `json:"nextPageToken"`
}

type getExtendedAgentCardRequest struct {
	Tenant string `json:"tenant"`
}

// The fields each request requires.

func (r getTaskRequest) Check() error         { return agentcore.Require("id", r.ID) }
func (r cancelTaskRequest) Check() error      { return agentcore.Require("id", r.ID) }
func (r subscribeToTaskRequest) Check() error { return agentcore.Require("id", r.ID) }
func (r pushConfigRequest) Check() error      { return agentcore.Require("taskId", r.TaskID, "id", r.ID) }
func (r listPushConfigsRequest) Check() error { return agentcore.Require("taskId", r.TaskID) }

// jsonObject is a google.protobuf.Struct kept as raw bytes.
type jsonObject = agentcore.JSONObject

// protoBytes is a proto bytes field: base64 in JSON. Like a ProtoJSON
// parser it reads standard or URL-safe base64, padded or not; it writes
// standard padded base64, as ProtoJSON writers do.
type protoBytes []byte

var errBase64 = errors.New("must be base64")

// UnmarshalJSON decodes any of the base64 alphabets ProtoJSON accepts.
func (p *protoBytes) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return errBase64
	}
	s = strings.TrimRight(s, "=")
	enc := base64.RawStdEncoding
	if strings.ContainsAny(s, "-_") {
		enc = base64.RawURLEncoding
	}
	v, err := enc.DecodeString(s)
	if err != nil {
		return errBase64
	}
	*p = v
	return nil
}

// MarshalJSON writes standard padded base64.
func (p protoBytes) MarshalJSON() ([]byte, error) {
	return json.Marshal(base64.StdEncoding.EncodeToString(p))
}
