package legacyagent

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
)

// storePush keeps cfg for rec, assigning an id when it has none; a config
// with the id of a stored one replaces it. A nil cfg is ignored.
func (a *Agent) storePush(rec *record, cfg *pushConfig) pushConfig {
	if cfg == nil {
		return pushConfig{}
	}
	c := *cfg
	if c.ID == "" {
		c.ID = newID()
	}
	s := a.store
	s.mu.Lock()
	defer s.mu.Unlock()
	if i := slices.IndexFunc(rec.push, func(p pushConfig) bool { return p.ID == c.ID }); i >= 0 {
		rec.push[i] = c
	} else {
		rec.push = append(rec.push, c)
	}
	a.notify(rec)
	return c
}

// pushConfigs returns a copy of task id's configs.
func (a *Agent) pushConfigs(taskID string) ([]pushConfig, *rpcError) {
	rec, ok := a.store.lookup(taskID)
	if !ok {
		return nil, errTaskNotFound(taskID)
	}
	a.store.mu.Lock()
	defer a.store.mu.Unlock()
	return slices.Clone(rec.push), nil
}

func errPushConfigNotFound(taskID, configID string) *rpcError {
	return &rpcError{
		Code:    codeInvalidParams,
		Message: "Invalid parameters: push notification config not found",
		Data:    map[string]string{"taskId": taskID, "pushNotificationConfigId": configID},
	}
}

// pushConfigSet answers tasks/pushNotificationConfig/set with the stored
// config, its id assigned by the agent when the request has none.
func (a *Agent) pushConfigSet(_ context.Context, params json.RawMessage) (any, *rpcError) {
	var p taskPushConfig
	if rerr := decodeParams(params, &p); rerr != nil {
		return nil, rerr
	}
	if p.TaskID == "" {
		return nil, errInvalidParams(errors.New("taskId: required"))
	}
	if err := validatePushConfig(p.PushNotificationConfig); err != nil {
		return nil, errInvalidParams(err)
	}
	rec, ok := a.store.lookup(p.TaskID)
	if !ok {
		return nil, errTaskNotFound(p.TaskID)
	}
	c := a.storePush(rec, p.PushNotificationConfig)
	return taskPushConfig{TaskID: p.TaskID, PushNotificationConfig: &c}, nil
}

// pushConfigGet answers tasks/pushNotificationConfig/get. Without a
// pushNotificationConfigId it returns the task's first config, as 0.2.5
// allowed bare {"id": taskId}.
func (a *Agent) pushConfigGet(_ context.Context, params json.RawMessage) (any, *rpcError) {
	var p pushConfigParams
	if rerr := decodeParams(params, &p); rerr != nil {
		return nil, rerr
	}
	if p.ID == "" {
		return nil, errInvalidParams(errors.New("id: required"))
	}
	configs, rerr := a.pushConfigs(p.ID)
	if rerr != nil {
		return nil, rerr
	}
	i := slices.IndexFunc(configs, func(c pushConfig) bool { return c.ID == p.PushNotificationConfigID })
	if p.PushNotificationConfigID == "" && len(configs) > 0 {
		i = 0
	}
	if i < 0 {
		return nil, errPushConfigNotFound(p.ID, p.PushNotificationConfigID)
	}
	return taskPushConfig{TaskID: p.ID, PushNotificationConfig: &configs[i]}, nil
}

// pushConfigList answers tasks/pushNotificationConfig/list with a JSON array,
// empty rather than null when the task has no config.
func (a *Agent) pushConfigList(_ context.Context, params json.RawMessage) (any, *rpcError) {
	var p pushConfigParams
	if rerr := decodeParams(params, &p); rerr != nil {
		return nil, rerr
	}
	if p.ID == "" {
		return nil, errInvalidParams(errors.New("id: required"))
	}
	configs, rerr := a.pushConfigs(p.ID)
	if rerr != nil {
		return nil, rerr
	}
	list := make([]taskPushConfig, len(configs))
	for i := range configs {
		list[i] = taskPushConfig{TaskID: p.ID, PushNotificationConfig: &configs[i]}
	}
	return list, nil
}

// pushConfigDelete answers tasks/pushNotificationConfig/delete with null.
func (a *Agent) pushConfigDelete(_ context.Context, params json.RawMessage) (any, *rpcError) {
	var p pushConfigParams
	if rerr := decodeParams(params, &p); rerr != nil {
		return nil, rerr
	}
	if p.ID == "" {
		return nil, errInvalidParams(errors.New("id: required"))
	}
	if p.PushNotificationConfigID == "" {
		return nil, errInvalidParams(errors.New("pushNotificationConfigId: required"))
	}
	rec, ok := a.store.lookup(p.ID)
	if !ok {
		return nil, errTaskNotFound(p.ID)
	}
	a.store.mu.Lock()
	defer a.store.mu.Unlock()
	i := slices.IndexFunc(rec.push, func(c pushConfig) bool { return c.ID == p.PushNotificationConfigID })
	if i < 0 {
		return nil, errPushConfigNotFound(p.ID, p.PushNotificationConfigID)
	}
	rec.push = slices.Delete(rec.push, i, i+1)
	return nil, nil
}
