package legacyagent

import (
	"encoding/json"

	"github.com/a2agate/gateway/internal/agentcore"
)

// rpcError is the 0.2.5 JSON-RPC error object. Data is any JSON value in
// 0.2.5; the agent uses an object naming what the error is about.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func encodeError(e *agentcore.Error) any {
	out := &rpcError{Code: e.Code, Message: e.Message}
	if e.Detail != nil {
		out.Data = e.Detail
	}
	return out
}

// decodeParams decodes params into v. Unknown keys are ignored, as the
// pydantic models of 0.x servers ignore them.
func decodeParams(params json.RawMessage, v any) *agentcore.Error {
	return agentcore.DecodeParams(params, v, "")
}

var errInvalidParams = agentcore.ErrInvalidParams
