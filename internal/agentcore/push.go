package agentcore

import "slices"

// StorePush keeps cfg for rec, assigning it an id when it has none, and
// returns it as stored; a config with the id of a stored one replaces it.
func (c *Core[M, A, C]) StorePush(rec *Record[M, A, C], cfg C) C {
	id := c.pushID(&cfg, rec.task.ID) // a task's id never changes: no lock
	if *id == "" {
		*id = NewID()
	}
	s := c.store
	s.mu.Lock()
	defer s.mu.Unlock()
	p := Push[C]{ID: *id, Config: cfg}
	if i := slices.IndexFunc(rec.push, func(q Push[C]) bool { return q.ID == p.ID }); i >= 0 {
		rec.push[i] = p
	} else {
		rec.push = append(rec.push, p)
	}
	c.notify(rec)
	return cfg
}

// Record returns task id's record, for StorePush.
func (c *Core[M, A, C]) Record(id string) (*Record[M, A, C], *Error) {
	rec, ok := c.store.lookup(id)
	if !ok {
		return nil, ErrTaskNotFound(id)
	}
	return rec, nil
}

// PushConfigs returns a copy of task id's configs, in creation order.
func (c *Core[M, A, C]) PushConfigs(taskID string) ([]Push[C], *Error) {
	rec, rerr := c.Record(taskID)
	if rerr != nil {
		return nil, rerr
	}
	c.store.mu.Lock()
	defer c.store.mu.Unlock()
	return slices.Clone(rec.push), nil
}

// DeletePush forgets task taskID's config id and reports whether there was
// one.
func (c *Core[M, A, C]) DeletePush(taskID, id string) (bool, *Error) {
	rec, rerr := c.Record(taskID)
	if rerr != nil {
		return false, rerr
	}
	c.store.mu.Lock()
	defer c.store.mu.Unlock()
	i := slices.IndexFunc(rec.push, func(p Push[C]) bool { return p.ID == id })
	if i < 0 {
		return false, nil
	}
	rec.push = slices.Delete(rec.push, i, i+1)
	return true, nil
}
