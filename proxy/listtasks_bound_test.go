package proxy

import (
	"context"
	"testing"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/store"
)

// tooBroadStore is an index that refuses every list as spanning more tasks
// than it checks at once, as the Redis index does for a state filter over
// more than max_tasks_per_owner tasks.
type tooBroadStore struct{ store.Store }

func (tooBroadStore) List(context.Context, store.Query) (store.Page, error) {
	return store.Page{}, &store.LimitError{Err: store.ErrListTooBroad, Limit: 10000, Setting: "store.redis.max_tasks_per_owner"}
}

// TestListTasksTooBroad: a list the index refuses as too broad is the
// caller's invalid params, saying the bound and what narrows it, not an
// index out of reach.
func TestListTasksTooBroad(t *testing.T) {
	tasks := tooBroadStore{store.NewMemory(store.MemoryConfig{})}
	defer tasks.Close()
	g := newGatewayOpts(t, backends[0].handler(t, nil), backends[0].version, Options{Tasks: tasks})
	r := g.call("1", "ListTasks", `{"status":"TASK_STATE_WORKING"}`)
	wantErrorSaying(t, r, dialect.V10, -32602, "more than 10000 tasks (store.redis.max_tasks_per_owner)")
	wantErrorSaying(t, r, dialect.V10, -32602, "params.contextId")
}
