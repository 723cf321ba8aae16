package proxy

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/normalize"
	"github.com/a2agate/gateway/store"
)

// listFetchers bounds the backend calls one ListTasks page makes at once.
const listFetchers = 8

// listTasks serves 1.0 ListTasks from the task index, whatever the backend
// speaks: a 0.x backend has no such method, and a 1.0 backend would list
// every caller's tasks. The index picks the caller's tasks; each is then
// read from its backend, so states are current and bodies complete.
func (a *Agent) listTasks(w http.ResponseWriter, r *http.Request, c *call) {
	q, err := normalize.ParseListTasks(c.env.Params)
	if err != nil {
		a.fail(w, c, normalize.AsError(err, dialect.ErrInvalidParams))
		return
	}
	ictx, span := a.startIndexSpan(r.Context(), c, indexList, "")
	page, err := a.tasks.List(ictx, store.Query{
		Agent: a.cfg.Name, Owner: c.owner, ContextID: q.ContextID, State: q.State, OrUnfinished: q.State != "",
		UpdatedAfter: q.UpdatedAfter, PageSize: q.PageSize, PageToken: q.PageToken,
	})
	endIndexSpan(span, err)
	var limit *store.LimitError
	switch {
	case errors.Is(err, store.ErrBadPageToken):
		a.fail(w, c, normalize.Errorf(dialect.ErrInvalidParams, "invalid params: params.pageToken is not a token this listing issued: start again without it"))
		return
	case errors.As(err, &limit) && errors.Is(err, store.ErrListTooBroad):
		a.fail(w, c, normalize.Errorf(dialect.ErrInvalidParams,
			"invalid params: params.status filters more than %d tasks (%s), more than the gateway's index checks at once: add params.contextId or params.statusTimestampAfter",
			limit.Limit, limit.Setting))
		return
	case err != nil:
		a.fail(w, c, a.indexUnavailable("list", err))
		return
	}
	tasks := make([][]byte, len(page.Tasks))
	errs := make([]*normalize.Error, len(page.Tasks))
	// The first read that fails the page ends the reads still to come: a
	// stalled backend costs the listing one wait, not one per round of
	// listFetchers reads, and the caller is told of that read, not of the
	// others it canceled.
	ctx, stop := context.WithCancel(r.Context())
	defer stop()
	var failed atomic.Pointer[normalize.Error]
	// Each read is bounded by max_reply_bytes, and so is the page: a
	// hundred reads of that size would hold a hundred replies' worth.
	var held atomic.Int64
	// stamps are the status times the index holds after the reads, which
	// bound the backends' clocks: the page is in the order of the walk.
	stamps := make([]time.Time, len(page.Tasks))
	var wg sync.WaitGroup
	sem := make(chan struct{}, listFetchers)
	for i, t := range page.Tasks {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if ctx.Err() != nil {
				return
			}
			tasks[i], stamps[i], errs[i] = a.currentTask(ctx, r, c, t, q)
			if e := errs[i]; e != nil && !goneFromBackend(e) && failed.CompareAndSwap(nil, e) {
				stop()
			}
			if held.Add(int64(len(tasks[i]))) > a.cfg.MaxReplyBytes && failed.CompareAndSwap(nil, normalize.Errorf(dialect.ErrInvalidParams,
				"invalid params: the %d tasks of this page are more than max_reply_bytes (%d bytes) together: ask for a smaller params.pageSize, a params.historyLength, or leave out params.includeArtifacts",
				len(page.Tasks), a.cfg.MaxReplyBytes)) {
				stop()
			}
		})
	}
	wg.Wait()
	if e := failed.Load(); e != nil {
		a.fail(w, c, e)
		return
	}
	// The backends may have moved tasks on since they were indexed: keep
	// the page newest first by the states just read.
	order := make([]int, len(tasks))
	for i := range order {
		order[i] = i
	}
	states := make([]string, len(tasks))
	for i, t := range tasks {
		states[i], _ = normalize.TaskStatus(t)
	}
	slices.SortStableFunc(order, func(x, y int) int { return stamps[y].Compare(stamps[x]) })
	listed := normalize.TaskPage{Tasks: make([][]byte, 0, len(order)), NextPageToken: page.NextPageToken, PageSize: q.PageSize, TotalSize: page.TotalSize}
	for _, i := range order {
		t := tasks[i]
		// Left out: a task gone from its backend (every other error
		// failed the page above), and one the index picked by the state
		// it last saw that the backend has moved on since (the filter is
		// about the state the caller is shown).
		if errs[i] != nil || (q.State != "" && states[i] != q.State) {
			listed.TotalSize = max(listed.TotalSize-1, 0)
			continue
		}
		listed.Tasks = append(listed.Tasks, t)
	}
	out := normalize.AppendListTasksResponse(nil, c.env.ID, listed)
	c.bytes += len(out)
	writeJSON(w, http.StatusOK, out)
}

// goneFromBackend reports whether a listed task could not be read because
// its backend no longer has it (restarted, expired) since it was indexed:
// the backend's own "task not found" too, which reaches the listing as the
// backend's error object, not as a kind of the gateway's.
func goneFromBackend(e *normalize.Error) bool {
	var ae *normalize.AgentError
	return e.Kind == dialect.ErrTaskNotFound || (errors.As(e, &ae) && ae.Code == dialect.ErrTaskNotFound.Error().Code)
}

// currentTask reads one indexed task from its backend, in 1.0 form, shaped
// as the listing asked, with the status time the index holds for it now.
func (a *Agent) currentTask(ctx context.Context, r *http.Request, c *call, t store.Task, q normalize.ListQuery) ([]byte, time.Time, *normalize.Error) {
	b := a.byName[t.Backend]
	if b == nil {
		b = a.backend
	}
	history := -1
	if q.HasHistoryLength {
		history = q.HistoryLength
	}
	params, err := normalize.TaskParams(dialect.GetTask, b.dialect, q.Tenant, t.ID, history)
	if err != nil {
		return nil, time.Time{}, normalize.AsError(err, dialect.ErrInternal)
	}
	// The sub-call's task id is the one asked for, so that an answer about
	// another task is refused (answersTask), and its context the index's,
	// so that one moving the task to another context is (record), as for a
	// caller's own get.
	sub := &call{start: c.start, env: c.env, backend: b, owner: c.owner, info: normalize.RequestInfo{TaskID: t.ID}, contextID: t.ContextID,
		indexedState: t.State, indexedAt: t.Updated}
	method, _ := dialect.MethodName(b.dialect, dialect.GetTask)
	task, e := a.unary(ctx, r, sub, dialect.GetTask, method, params)
	if e != nil {
		return nil, time.Time{}, e
	}
	if !q.IncludeArtifacts {
		if task, err = normalize.WithoutArtifacts(task); err != nil {
			return nil, time.Time{}, normalize.AsError(err, dialect.ErrInternal)
		}
	}
	if q.HasHistoryLength {
		if task, err = normalize.TrimHistory(dialect.GetTask, dialect.V10, task, q.HistoryLength); err != nil {
			return nil, time.Time{}, normalize.AsError(err, dialect.ErrInternal)
		}
	}
	return task, sub.indexedAt, nil
}
