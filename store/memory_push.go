package store

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"
)

// memPush holds a Memory's push configs and relays. Entries live as long as
// the task index keeps a task (its TTL), renewed on every write.
type memPush struct {
	mu     sync.Mutex
	tasks  map[taskKey]*memPushTask
	relays map[string]memRelay
}

type taskKey struct{ agent, id string }

type memPushTask struct {
	configs  []PushConfig
	relay    PushRelay
	snapshot []byte
	expires  time.Time
}

type memRelay struct {
	relay   PushRelay
	expires time.Time
}

func (m *Memory) pushOpen() (*memPush, time.Time, error) {
	m.mu.Lock()
	closed := m.closed
	m.mu.Unlock()
	if closed {
		return nil, time.Time{}, unavailable("push config", errClosed)
	}
	p := &m.push
	p.mu.Lock()
	if p.tasks == nil {
		p.tasks, p.relays = map[taskKey]*memPushTask{}, map[string]memRelay{}
	}
	return p, m.now(), nil
}

// liveTask returns the task's entry, dropping it when it expired.
func (p *memPush) liveTask(k taskKey, now time.Time) *memPushTask {
	t := p.tasks[k]
	if t != nil && !now.Before(t.expires) {
		delete(p.tasks, k)
		delete(p.relays, t.relay.ID)
		return nil
	}
	return t
}

// purge drops the expired entries. Reads drop only what they look up, and
// much is never looked up again: the relay of a send that named no task
// (answered with a message, or failed), a task's configs once nobody asks
// about it. Without the sweep those would be kept for good.
func (p *memPush) purge(now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, t := range p.tasks {
		if !now.Before(t.expires) {
			delete(p.tasks, k)
			delete(p.relays, t.relay.ID)
		}
	}
	for id, r := range p.relays {
		if !now.Before(r.expires) {
			delete(p.relays, id)
		}
	}
}

func (m *Memory) PutPushConfig(_ context.Context, c PushConfig, relay PushRelay) (PushRelay, error) {
	if err := validatePushConfig(c, relay); err != nil {
		return PushRelay{}, err
	}
	p, now, err := m.pushOpen()
	if err != nil {
		return PushRelay{}, err
	}
	defer p.mu.Unlock()
	if r, ok := p.relays[relay.ID]; relay.Pending != nil && ok && now.Before(r.expires) && r.relay.TaskID != "" && r.relay.TaskID != c.TaskID {
		return PushRelay{}, ErrRelayBound
	}
	// Kept as map keys: the caller's strings may be views into buffers it
	// reuses.
	c.Agent, c.TaskID, c.ID = strings.Clone(c.Agent), strings.Clone(c.TaskID), strings.Clone(c.ID)
	k := taskKey{c.Agent, c.TaskID}
	t := p.liveTask(k, now)
	if t == nil {
		relay.Agent, relay.TaskID, relay.Pending = c.Agent, c.TaskID, nil
		t = &memPushTask{relay: relay}
		p.tasks[k] = t
	}
	if i := slices.IndexFunc(t.configs, func(x PushConfig) bool { return x.ID == c.ID }); i >= 0 {
		t.configs[i] = c
	} else {
		t.configs = append(t.configs, c)
	}
	t.expires = now.Add(m.ttl)
	p.relays[t.relay.ID] = memRelay{relay: t.relay, expires: t.expires}
	return t.relay, nil
}

func (m *Memory) PushConfigs(_ context.Context, agent, taskID string) ([]PushConfig, PushRelay, error) {
	p, now, err := m.pushOpen()
	if err != nil {
		return nil, PushRelay{}, err
	}
	defer p.mu.Unlock()
	t := p.liveTask(taskKey{agent, taskID}, now)
	if t == nil {
		return nil, PushRelay{}, nil
	}
	configs := slices.Clone(t.configs)
	sortPushConfigs(configs)
	return configs, t.relay, nil
}

func (m *Memory) DeletePushConfig(_ context.Context, agent, taskID, id string) (PushRelay, error) {
	p, now, err := m.pushOpen()
	if err != nil {
		return PushRelay{}, err
	}
	defer p.mu.Unlock()
	k := taskKey{agent, taskID}
	t := p.liveTask(k, now)
	if t == nil {
		return PushRelay{}, ErrNotFound
	}
	i := slices.IndexFunc(t.configs, func(x PushConfig) bool { return x.ID == id })
	if i < 0 {
		return PushRelay{}, ErrNotFound
	}
	t.configs = slices.Delete(t.configs, i, i+1)
	if len(t.configs) > 0 {
		return PushRelay{}, nil
	}
	delete(p.tasks, k)
	delete(p.relays, t.relay.ID)
	return t.relay, nil
}

func (m *Memory) PutPendingRelay(_ context.Context, relay PushRelay) error {
	p, now, err := m.pushOpen()
	if err != nil {
		return err
	}
	defer p.mu.Unlock()
	p.relays[strings.Clone(relay.ID)] = memRelay{relay: relay, expires: now.Add(m.ttl)}
	return nil
}

func (m *Memory) DeleteRelay(_ context.Context, relayID string) error {
	p, _, err := m.pushOpen()
	if err != nil {
		return err
	}
	defer p.mu.Unlock()
	delete(p.relays, relayID)
	return nil
}

func (m *Memory) PushRelay(_ context.Context, relayID string) (PushRelay, error) {
	p, now, err := m.pushOpen()
	if err != nil {
		return PushRelay{}, err
	}
	defer p.mu.Unlock()
	r, ok := p.relays[relayID]
	if !ok || !now.Before(r.expires) {
		delete(p.relays, relayID)
		return PushRelay{}, ErrNotFound
	}
	return r.relay, nil
}

func (m *Memory) PutPushSnapshot(_ context.Context, agent, taskID string, task []byte) error {
	p, now, err := m.pushOpen()
	if err != nil {
		return err
	}
	defer p.mu.Unlock()
	if t := p.liveTask(taskKey{agent, taskID}, now); t != nil {
		t.snapshot = slices.Clone(task)
	}
	return nil
}

func (m *Memory) PushSnapshot(_ context.Context, agent, taskID string) ([]byte, error) {
	p, now, err := m.pushOpen()
	if err != nil {
		return nil, err
	}
	defer p.mu.Unlock()
	t := p.liveTask(taskKey{agent, taskID}, now)
	if t == nil || t.snapshot == nil {
		return nil, ErrNotFound
	}
	return slices.Clone(t.snapshot), nil
}
