package agent10

import (
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/a2agate/gateway/internal/agentcore"
)

// pushID names the config's task, which a TaskPushNotificationConfig
// carries.
func pushID(c *pushConfig, taskID string) *string {
	c.TaskID = taskID
	return &c.ID
}

// pushConfigs returns a copy of task id's configs.
func (a *Agent) pushConfigs(taskID string) ([]pushConfig, *agentcore.Error) {
	stored, rerr := a.core.PushConfigs(taskID)
	if rerr != nil {
		return nil, rerr
	}
	configs := make([]pushConfig, len(stored))
	for i, p := range stored {
		configs[i] = p.Config
	}
	return configs, nil
}

func errPushConfigNotFound(taskID, configID string) *agentcore.Error {
	return newError(agentcore.CodeInvalidParams, "Invalid parameters: push notification config not found",
		map[string]string{"taskId": taskID, "id": configID})
}

var errTaskIDRequired = errors.New("taskId: required")

// createPushConfig answers CreateTaskPushNotificationConfig with the stored
// config, its id assigned by the agent when the request has none.
func (a *Agent) createPushConfig(_ *http.Request, p *pushConfig) (any, *agentcore.Error) {
	if p.TaskID == "" {
		return nil, errInvalidParams(errTaskIDRequired)
	}
	if err := validatePushConfig(p, "params"); err != nil {
		return nil, errInvalidParams(err)
	}
	rec, rerr := a.core.Record(p.TaskID)
	if rerr != nil {
		return nil, rerr
	}
	return a.core.StorePush(rec, *p), nil
}

// getPushConfig answers GetTaskPushNotificationConfig.
func (a *Agent) getPushConfig(_ *http.Request, p *pushConfigRequest) (any, *agentcore.Error) {
	configs, rerr := a.pushConfigs(p.TaskID)
	if rerr != nil {
		return nil, rerr
	}
	i := slices.IndexFunc(configs, func(c pushConfig) bool { return c.ID == p.ID })
	if i < 0 {
		return nil, errPushConfigNotFound(p.TaskID, p.ID)
	}
	return configs[i], nil
}

// listPushConfigs answers ListTaskPushNotificationConfigs with
// {"configs":[..],"nextPageToken":".."}. A pageSize of 0 means no limit.
func (a *Agent) listPushConfigs(_ *http.Request, p *listPushConfigsRequest) (any, *agentcore.Error) {
	if p.PageSize < 0 {
		return nil, errInvalidParams(fmt.Errorf("pageSize: must not be negative, got %d", p.PageSize))
	}
	start := 0
	if p.PageToken != "" {
		n, err := parseOffsetToken(p.PageToken)
		if err != nil {
			return nil, errInvalidParams(err)
		}
		start = n
	}
	configs, rerr := a.pushConfigs(p.TaskID)
	if rerr != nil {
		return nil, rerr
	}
	start = min(start, len(configs))
	end := len(configs)
	if p.PageSize > 0 {
		end = min(start+int(p.PageSize), end)
	}
	// Written as [] rather than omitted when empty, like nextPageToken.
	resp := listPushConfigsResponse{Configs: append([]pushConfig{}, configs[start:end]...)}
	if end < len(configs) {
		resp.NextPageToken = offsetToken(end)
	}
	return resp, nil
}

// deletePushConfig answers DeleteTaskPushNotificationConfig with {}, the
// ProtoJSON of google.protobuf.Empty.
func (a *Agent) deletePushConfig(_ *http.Request, p *pushConfigRequest) (any, *agentcore.Error) {
	found, rerr := a.core.DeletePush(p.TaskID, p.ID)
	if rerr != nil {
		return nil, rerr
	}
	if !found {
		return nil, errPushConfigNotFound(p.TaskID, p.ID)
	}
	if a.core.Opts.Like == agentcore.GoV2 {
		return agentcore.NoResult, nil
	}
	return struct{}{}, nil
}
