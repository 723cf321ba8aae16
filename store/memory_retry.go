package store

import (
	"container/list"
	"context"
	"slices"
	"sync"
	"time"
)

// memSends holds a Memory's send records, bounded by its MaxTasks: when
// full, the record written least recently goes first (expired ones before).
type memSends struct {
	mu    sync.Mutex
	byKey map[SendKey]*list.Element // of *memSend
	order list.List                 // least recently written first
}

type memSend struct {
	key SendKey
	rec SendRecord
}

func (m *Memory) isClosed() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.closed
}

// ClaimSend implements Retries.
func (m *Memory) ClaimSend(ctx context.Context, a Admission, key SendKey, rec SendRecord, now time.Time) (string, SendRecord, bool, error) {
	if key.Key == "" {
		return "", SendRecord{}, false, errNoClaim
	}
	owner, err := m.Admit(ctx, a)
	if err != nil && err != ErrNotFound {
		return "", SendRecord{}, false, err
	}
	prior, claimed := m.sends.claim(key, rec, now, m.maxTasks)
	return owner, prior, claimed, err
}

// GetClaimSend implements Retries.
func (m *Memory) GetClaimSend(ctx context.Context, agent, id string, key SendKey, rec SendRecord, now time.Time) (Task, SendRecord, bool, error) {
	if key.Key == "" {
		return Task{}, SendRecord{}, false, errNoClaim
	}
	t, err := m.Get(ctx, agent, id)
	if err != nil && err != ErrNotFound {
		return Task{}, SendRecord{}, false, err
	}
	prior, claimed := m.sends.claim(key, rec, now, m.maxTasks)
	return t, prior, claimed, err
}

// claim writes rec as key's record unless a live record other than a
// not-accepted one is there, which it returns instead.
func (s *memSends) claim(key SendKey, rec SendRecord, now time.Time, limit int) (SendRecord, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	prior, ok := s.get(key, now)
	if ok && prior.State != SendNotAccepted {
		return prior, false
	}
	s.put(key, rec, limit)
	return prior, true
}

// SaveSend implements Retries.
func (m *Memory) SaveSend(_ context.Context, key SendKey, rec SendRecord) error {
	if m.isClosed() {
		return unavailable("save send", errClosed)
	}
	s := &m.sends
	s.mu.Lock()
	defer s.mu.Unlock()
	s.put(key, rec, m.maxTasks)
	return nil
}

// LoadSend implements Retries.
func (m *Memory) LoadSend(_ context.Context, key SendKey, now time.Time) (SendRecord, error) {
	if m.isClosed() {
		return SendRecord{}, unavailable("load send", errClosed)
	}
	s := &m.sends
	s.mu.Lock()
	defer s.mu.Unlock()
	if rec, ok := s.get(key, now); ok {
		return rec, nil
	}
	return SendRecord{}, ErrNotFound
}

// get returns key's record when it has not expired by now. The caller
// holds s.mu.
func (s *memSends) get(key SendKey, now time.Time) (SendRecord, bool) {
	e := s.byKey[key]
	if e == nil {
		return SendRecord{}, false
	}
	ms := e.Value.(*memSend)
	if !ms.rec.Expires.After(now) {
		s.order.Remove(e)
		delete(s.byKey, key)
		return SendRecord{}, false
	}
	return ms.rec, true
}

// put writes key's record, making room within limit. The caller holds s.mu.
func (s *memSends) put(key SendKey, rec SendRecord, limit int) {
	if s.byKey == nil {
		s.byKey = map[SendKey]*list.Element{}
	}
	// The answer may be a view into a buffer the caller reuses.
	rec.Answer = slices.Clone(rec.Answer)
	if e := s.byKey[key]; e != nil {
		e.Value.(*memSend).rec = rec
		s.order.MoveToBack(e)
		return
	}
	for s.order.Len() >= limit {
		front := s.order.Front()
		s.order.Remove(front)
		delete(s.byKey, front.Value.(*memSend).key)
	}
	s.byKey[key] = s.order.PushBack(&memSend{key: key, rec: rec})
}
