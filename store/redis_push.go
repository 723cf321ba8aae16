package store

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Push configs live in one hash per task, so that every command on a task's
// configs touches one key (one Redis Cluster slot):
//
//	<prefix>push:{<len:agent>:<task>}  hash: "cfg:<id>" -> PushConfig JSON,
//	                                    "relay" -> PushRelay JSON,
//	                                    "snap" -> the last task seen (1.0 JSON)
//	<prefix>pushrelay:{<relay id>}     string: PushRelay JSON, to find a task
//	                                    from the URL a delivery came to
//
// Both expire with the task index's TTL, renewed on every write.

func (k redisKeys) pushTask(agent, taskID string) string {
	return k.prefix + "push:{" + lengthPrefixed(agent) + ":" + taskID + "}"
}

func (k redisKeys) pushRelay(relayID string) string {
	return k.prefix + "pushrelay:{" + relayID + "}"
}

const (
	pushFieldConfig = "cfg:"
	pushFieldRelay  = "relay"
	pushFieldSnap   = "snap"
)

// putPushConfigScript keeps the task's first relay and returns it.
var putPushConfigScript = redis.NewScript(`
redis.call('HSETNX', KEYS[1], 'relay', ARGV[1])
redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return redis.call('HGET', KEYS[1], 'relay')
`)

// bindRelayScript writes the relay ARGV[1] bound to task ARGV[2], unless
// the relay is bound to another task: it returns 1 when written, else 0.
var bindRelayScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if cur then
  local ok, r = pcall(cjson.decode, cur)
  if ok and type(r.taskId) == 'string' and r.taskId ~= '' and r.taskId ~= ARGV[2] then return 0 end
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
return 1
`)

// unputPushConfigScript takes back a config written under a task whose
// binding of the relay ARGV[2] was refused: the task's hash goes when that
// leaves it no config and the relay is that one.
var unputPushConfigScript = redis.NewScript(`
redis.call('HDEL', KEYS[1], ARGV[1])
for _, f in ipairs(redis.call('HKEYS', KEYS[1])) do
  if string.sub(f, 1, 4) == 'cfg:' then return 0 end
end
local relay = redis.call('HGET', KEYS[1], 'relay')
if relay then
  local ok, r = pcall(cjson.decode, relay)
  if not (ok and r.id == ARGV[2]) then return 0 end
end
redis.call('DEL', KEYS[1])
return 1
`)

// deletePushConfigScript returns -1 for a config that is not there, 1 when
// others remain, else the relay JSON (and the task's hash is gone).
var deletePushConfigScript = redis.NewScript(`
if redis.call('HDEL', KEYS[1], ARGV[1]) == 0 then return -1 end
for _, f in ipairs(redis.call('HKEYS', KEYS[1])) do
  if string.sub(f, 1, 4) == 'cfg:' then return 1 end
end
local relay = redis.call('HGET', KEYS[1], 'relay') or ''
redis.call('DEL', KEYS[1])
return relay
`)

func (r *Redis) PutPushConfig(ctx context.Context, c PushConfig, relay PushRelay) (PushRelay, error) {
	if err := validatePushConfig(c, relay); err != nil {
		return PushRelay{}, err
	}
	binding := relay.Pending != nil
	relay.Agent, relay.TaskID, relay.Pending = c.Agent, c.TaskID, nil
	rj, _ := json.Marshal(relay)
	cj, err := json.Marshal(c)
	if err != nil {
		return PushRelay{}, err
	}
	ttl := r.physicalTTL.Milliseconds()
	got, err := putPushConfigScript.Run(ctx, r.client, []string{r.keys.pushTask(c.Agent, c.TaskID)},
		rj, pushFieldConfig+c.ID, cj, ttl).Text()
	if err != nil {
		return PushRelay{}, unavailable("put push config", err)
	}
	var kept PushRelay
	if err := json.Unmarshal([]byte(got), &kept); err != nil {
		return PushRelay{}, unavailable("decode push relay", err)
	}
	if binding && kept.ID == relay.ID {
		// The relay's key is in another slot than the task's hash: it is
		// bound after the config is written, so that a delivery finding it
		// bound finds the config too, and the config is taken back when
		// another task has it.
		bound, err := bindRelayScript.Run(ctx, r.client, []string{r.keys.pushRelay(kept.ID)}, got, c.TaskID, ttl).Int()
		if err != nil {
			return PushRelay{}, unavailable("bind push relay", err)
		}
		if bound == 0 {
			if err := unputPushConfigScript.Run(ctx, r.client, []string{r.keys.pushTask(c.Agent, c.TaskID)}, pushFieldConfig+c.ID, kept.ID).Err(); err != nil {
				return PushRelay{}, unavailable("take back push config", err)
			}
			return PushRelay{}, ErrRelayBound
		}
		return kept, nil
	}
	if err := r.client.Set(ctx, r.keys.pushRelay(kept.ID), got, r.physicalTTL).Err(); err != nil {
		return PushRelay{}, unavailable("put push relay", err)
	}
	return kept, nil
}

func (r *Redis) PushConfigs(ctx context.Context, agent, taskID string) ([]PushConfig, PushRelay, error) {
	fields, err := r.client.HGetAll(ctx, r.keys.pushTask(agent, taskID)).Result()
	if err != nil {
		return nil, PushRelay{}, unavailable("list push configs", err)
	}
	var relay PushRelay
	var configs []PushConfig
	for f, v := range fields {
		switch {
		case f == pushFieldRelay:
			err = json.Unmarshal([]byte(v), &relay)
		case strings.HasPrefix(f, pushFieldConfig):
			var c PushConfig
			err = json.Unmarshal([]byte(v), &c)
			configs = append(configs, c)
		}
		if err != nil {
			return nil, PushRelay{}, unavailable("decode push config", err)
		}
	}
	sortPushConfigs(configs)
	return configs, relay, nil
}

func (r *Redis) DeletePushConfig(ctx context.Context, agent, taskID, id string) (PushRelay, error) {
	v, err := deletePushConfigScript.Run(ctx, r.client, []string{r.keys.pushTask(agent, taskID)}, pushFieldConfig+id).Result()
	if err != nil {
		return PushRelay{}, unavailable("delete push config", err)
	}
	switch v := v.(type) {
	case int64:
		if v < 0 {
			return PushRelay{}, ErrNotFound
		}
		return PushRelay{}, nil
	case string:
		var relay PushRelay
		if v == "" {
			return relay, nil
		}
		if err := json.Unmarshal([]byte(v), &relay); err != nil {
			return PushRelay{}, unavailable("decode push relay", err)
		}
		if err := r.client.Del(ctx, r.keys.pushRelay(relay.ID)).Err(); err != nil {
			return PushRelay{}, unavailable("delete push relay", err)
		}
		return relay, nil
	}
	return PushRelay{}, unavailable("delete push config", errors.New("unexpected reply"))
}

func (r *Redis) PutPendingRelay(ctx context.Context, relay PushRelay) error {
	rj, err := json.Marshal(relay)
	if err != nil {
		return err
	}
	if err := r.client.Set(ctx, r.keys.pushRelay(relay.ID), rj, r.physicalTTL).Err(); err != nil {
		return unavailable("put push relay", err)
	}
	return nil
}

func (r *Redis) DeleteRelay(ctx context.Context, relayID string) error {
	if err := r.client.Del(ctx, r.keys.pushRelay(relayID)).Err(); err != nil {
		return unavailable("delete push relay", err)
	}
	return nil
}

func (r *Redis) PushRelay(ctx context.Context, relayID string) (PushRelay, error) {
	v, err := r.client.Get(ctx, r.keys.pushRelay(relayID)).Bytes()
	if err != nil {
		return PushRelay{}, readErr("get push relay", err)
	}
	var relay PushRelay
	if err := json.Unmarshal(v, &relay); err != nil {
		return PushRelay{}, unavailable("decode push relay", err)
	}
	return relay, nil
}

// putSnapshotScript writes the snapshot only into a task that has configs.
var putSnapshotScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'snap', ARGV[1])
return 1
`)

func (r *Redis) PutPushSnapshot(ctx context.Context, agent, taskID string, task []byte) error {
	if err := putSnapshotScript.Run(ctx, r.client, []string{r.keys.pushTask(agent, taskID)}, task).Err(); err != nil {
		return unavailable("put push snapshot", err)
	}
	return nil
}

func (r *Redis) PushSnapshot(ctx context.Context, agent, taskID string) ([]byte, error) {
	v, err := r.client.HGet(ctx, r.keys.pushTask(agent, taskID), pushFieldSnap).Bytes()
	if err != nil {
		return nil, readErr("get push snapshot", err)
	}
	return v, nil
}
