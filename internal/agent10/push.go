package agent10

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// storePush keeps cfg for rec, assigning an id when it has none; a config
// with the id of a stored one replaces it. A nil cfg is ignored.
func (a *Agent) storePush(rec *record, cfg *pushConfig) pushConfig {
	if cfg == nil {
		return pushConfig{}
	}
	c := *cfg
	c.TaskID = rec.task.ID
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
	return newError(codeInvalidParams, "Invalid parameters: push notification config not found",
		map[string]string{"taskId": taskID, "id": configID})
}

var errTaskIDRequired = errors.New("taskId: required")

// createPushConfig answers CreateTaskPushNotificationConfig with the stored
// config, its id assigned by the agent when the request has none.
func (a *Agent) createPushConfig(_ *http.Request, params json.RawMessage) (any, *rpcError) {
	var p pushConfig
	if rerr := decodeParams(params, &p); rerr != nil {
		return nil, rerr
	}
	if p.TaskID == "" {
		return nil, errInvalidParams(errTaskIDRequired)
	}
	if err := validatePushConfig(&p, "params"); err != nil {
		return nil, errInvalidParams(err)
	}
	rec, ok := a.store.lookup(p.TaskID)
	if !ok {
		return nil, errTaskNotFound(p.TaskID)
	}
	return a.storePush(rec, &p), nil
}

// getPushConfig answers GetTaskPushNotificationConfig.
func (a *Agent) getPushConfig(_ *http.Request, params json.RawMessage) (any, *rpcError) {
	var p pushConfigRequest
	if rerr := decodeParams(params, &p); rerr != nil {
		return nil, rerr
	}
	if p.TaskID == "" {
		return nil, errInvalidParams(errTaskIDRequired)
	}
	if p.ID == "" {
		return nil, errInvalidParams(errIDRequired)
	}
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
func (a *Agent) listPushConfigs(_ *http.Request, params json.RawMessage) (any, *rpcError) {
	var p listPushConfigsRequest
	if rerr := decodeParams(params, &p); rerr != nil {
		return nil, rerr
	}
	if p.TaskID == "" {
		return nil, errInvalidParams(errTaskIDRequired)
	}
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
func (a *Agent) deletePushConfig(_ *http.Request, params json.RawMessage) (any, *rpcError) {
	var p pushConfigRequest
	if rerr := decodeParams(params, &p); rerr != nil {
		return nil, rerr
	}
	if p.TaskID == "" {
		return nil, errInvalidParams(errTaskIDRequired)
	}
	if p.ID == "" {
		return nil, errInvalidParams(errIDRequired)
	}
	rec, ok := a.store.lookup(p.TaskID)
	if !ok {
		return nil, errTaskNotFound(p.TaskID)
	}
	a.store.mu.Lock()
	defer a.store.mu.Unlock()
	i := slices.IndexFunc(rec.push, func(c pushConfig) bool { return c.ID == p.ID })
	if i < 0 {
		return nil, errPushConfigNotFound(p.TaskID, p.ID)
	}
	rec.push = slices.Delete(rec.push, i, i+1)
	return struct{}{}, nil
}

// Push config pages are addressed by offset: a task has few configs and
// they are listed in creation order.

func offsetToken(n int) string {
	return base64.RawURLEncoding.EncodeToString([]byte("offset:" + strconv.Itoa(n)))
}

func parseOffsetToken(tok string) (int, error) {
	raw, err := base64.RawURLEncoding.DecodeString(tok)
	if err == nil {
		if s, ok := strings.CutPrefix(string(raw), "offset:"); ok {
			if n, err := strconv.Atoi(s); err == nil && n >= 0 {
				return n, nil
			}
		}
	}
	return 0, errPageToken
}
