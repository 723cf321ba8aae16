package legacyagent

import (
	"errors"
	"net/http"
	"slices"

	"github.com/a2agate/gateway/internal/agentcore"
)

func pushID(c *pushConfig, _ string) *string { return &c.ID }

func errPushConfigNotFound(taskID, configID string) *agentcore.Error {
	return agentcore.NewError(agentcore.CodeInvalidParams, "Invalid parameters: push notification config not found",
		map[string]string{"taskId": taskID, "pushNotificationConfigId": configID})
}

// pushConfigSet answers tasks/pushNotificationConfig/set with the stored
// config, its id assigned by the agent when the request has none.
func (a *Agent) pushConfigSet(_ *http.Request, p *taskPushConfig) (any, *agentcore.Error) {
	if err := validatePushConfig(p.PushNotificationConfig); err != nil {
		return nil, errInvalidParams(err)
	}
	rec, rerr := a.core.Record(p.TaskID)
	if rerr != nil {
		return nil, rerr
	}
	c := a.core.StorePush(rec, *p.PushNotificationConfig)
	return taskPushConfig{TaskID: p.TaskID, PushNotificationConfig: &c}, nil
}

// pushConfigGet answers tasks/pushNotificationConfig/get. Without a
// pushNotificationConfigId it returns the task's first config, as 0.2.5
// allowed bare {"id": taskId}.
func (a *Agent) pushConfigGet(_ *http.Request, p *pushConfigParams) (any, *agentcore.Error) {
	configs, rerr := a.core.PushConfigs(p.ID)
	if rerr != nil {
		return nil, rerr
	}
	i := slices.IndexFunc(configs, func(c agentcore.Push[pushConfig]) bool { return c.ID == p.PushNotificationConfigID })
	if p.PushNotificationConfigID == "" && len(configs) > 0 {
		i = 0
	}
	if i < 0 {
		return nil, errPushConfigNotFound(p.ID, p.PushNotificationConfigID)
	}
	return taskPushConfig{TaskID: p.ID, PushNotificationConfig: &configs[i].Config}, nil
}

// pushConfigList answers tasks/pushNotificationConfig/list with a JSON array,
// empty rather than null when the task has no config.
func (a *Agent) pushConfigList(_ *http.Request, p *pushConfigParams) (any, *agentcore.Error) {
	configs, rerr := a.core.PushConfigs(p.ID)
	if rerr != nil {
		return nil, rerr
	}
	list := make([]taskPushConfig, len(configs))
	for i := range configs {
		list[i] = taskPushConfig{TaskID: p.ID, PushNotificationConfig: &configs[i].Config}
	}
	return list, nil
}

// pushConfigDelete answers tasks/pushNotificationConfig/delete with null.
func (a *Agent) pushConfigDelete(_ *http.Request, p *pushConfigParams) (any, *agentcore.Error) {
	if p.PushNotificationConfigID == "" {
		return nil, errInvalidParams(errors.New("pushNotificationConfigId: required"))
	}
	found, rerr := a.core.DeletePush(p.ID, p.PushNotificationConfigID)
	if rerr != nil {
		return nil, rerr
	}
	if !found {
		return nil, errPushConfigNotFound(p.ID, p.PushNotificationConfigID)
	}
	return nil, nil
}
