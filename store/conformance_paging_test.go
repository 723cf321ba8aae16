package store

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// testPagingWalk walks ~300 tasks of 3 owners to the end, page by page, with
// filters, while tasks are updated and created between pages. A keyset
// cursor promises: no task twice, every task that matched when the walk
// began and was not touched during it exactly once, in List order, and a
// TotalSize that is current on every page. A touched task gets the newest
// timestamp, so it moves ahead of the cursor and is not seen (again).
func testPagingWalk(t *testing.T, open opener) {
	s, clock := open.onFakeClock(t)
	t0 := clock.Now().Add(-2 * time.Hour)
	owners := []string{"alice", "bob", ""}
	states := []string{working, completed, inputReq}
	model := map[string]Task{} // id -> task as the store should hold it
	var order []string         // ids in creation order, for deterministic picks
	for j := range 100 {
		for _, owner := range owners {
			task := Task{
				// Ids are not in time order, and four tasks share each timestamp.
				ID:        fmt.Sprintf("t%02x-%s-%d", (j*37)%256, owner, j),
				ContextID: fmt.Sprintf("%s-ctx-%d", owner, j%5), // a context has one owner
				Owner:     owner,
				Agent:     "walk",
				Backend:   "b",
				State:     states[j%3],
				Updated:   t0.Add(time.Duration(j/4) * time.Second),
			}
			mustPut(t, s, task)
			model[task.ID] = task
			order = append(order, task.ID)
		}
	}

	queries := []struct {
		name string
		q    Query
	}{
		{"everything", Query{Owner: "alice"}},
		{"auth off", Query{Owner: ""}},
		{"state", Query{Owner: "bob", State: working}},
		{"context", Query{Owner: "alice", ContextID: "alice-ctx-2"}},
		{"context and state", Query{Owner: "alice", ContextID: "alice-ctx-1", State: completed}},
		{"updated after", Query{Owner: "bob", UpdatedAfter: t0.Add(10 * time.Second)}},
	}
	touches := 0
	// touch gives a task the newest timestamp and the next state, which
	// the store keeps unless the task is final already.
	touch := func(id string) {
		touches++
		task := model[id]
		for i, st := range states {
			if st == task.State {
				task.State = states[(i+1)%len(states)]
				break
			}
		}
		stored := task
		if model[id].State == completed {
			stored.State = completed
		}
		task.Updated = t0.Add(time.Hour + time.Duration(touches)*time.Millisecond)
		stored.Updated = task.Updated
		mustPut(t, s, task)
		model[id] = stored
	}
	created := 0

	for _, walk := range queries {
		q := walk.q
		q.Agent, q.PageSize = "walk", 7
		initial := matching(model, q)
		if len(initial) < 8 {
			t.Fatalf("%s: only %d tasks match; the walk would not page", walk.name, len(initial))
		}
		seen := map[string]bool{}
		touchedUnseen := map[string]bool{}
		var walked []Task
		for pages := 0; ; pages++ {
			if pages > 200 {
				t.Fatalf("%s: walk did not end", walk.name)
			}
			p := mustList(t, s, q)
			if want := len(matching(model, q)); p.TotalSize != want {
				t.Errorf("%s page %d: TotalSize = %d, want %d", walk.name, pages, p.TotalSize, want)
			}
			if len(p.Tasks) > q.PageSize || (p.NextPageToken != "" && len(p.Tasks) != q.PageSize) {
				t.Fatalf("%s page %d: %d tasks with token %q", walk.name, pages, len(p.Tasks), p.NextPageToken)
			}
			for _, task := range p.Tasks {
				if seen[task.ID] {
					t.Fatalf("%s page %d: task %s returned twice", walk.name, pages, task.ID)
				}
				if task != model[task.ID] {
					t.Errorf("%s page %d: task %+v, want %+v", walk.name, pages, task, model[task.ID])
				}
				if !matches(task, q) {
					t.Errorf("%s page %d: task %+v does not match the filters", walk.name, pages, task)
				}
				if n := len(walked); n > 0 && !listsBefore(walked[n-1], task) {
					t.Errorf("%s page %d: %s (%v) listed after %s (%v)", walk.name, pages,
						task.ID, task.Updated, walked[n-1].ID, walked[n-1].Updated)
				}
				seen[task.ID] = true
				walked = append(walked, task)
			}
			if p.NextPageToken == "" {
				break
			}
			q.PageToken = p.NextPageToken

			// Between pages: touch a task already seen, one not yet seen,
			// one of another owner, and create a task for this owner.
			touch(walked[len(walked)/2].ID)
			for i := len(initial) - 1; i >= 0; i-- {
				if id := initial[i].ID; !seen[id] && !touchedUnseen[id] {
					touchedUnseen[id] = true
					touch(id)
					break
				}
			}
			for i := touches; ; i++ {
				if id := order[i%len(order)]; model[id].Owner != q.Owner {
					touch(id)
					break
				}
			}
			created++
			fresh := Task{ID: fmt.Sprintf("new-%03d", created), ContextID: q.ContextID, Owner: q.Owner, Agent: "walk",
				State: working, Updated: t0.Add(2 * time.Hour)}
			if q.State != "" {
				fresh.State = q.State
			}
			mustPut(t, s, fresh)
			model[fresh.ID] = fresh
		}
		var want []string
		for _, task := range initial {
			if !touchedUnseen[task.ID] {
				want = append(want, task.ID)
			}
		}
		wantIDs(t, walk.name+": walked", walked, want)
	}
}

// matching returns the tasks of model that q selects, in List order.
func matching(model map[string]Task, q Query) []Task {
	var out []Task
	for _, task := range model {
		if matches(task, q) {
			out = append(out, task)
		}
	}
	sortListOrder(out)
	return out
}

func matches(task Task, q Query) bool {
	return task.Agent == q.Agent && task.Owner == q.Owner &&
		(q.ContextID == "" || task.ContextID == q.ContextID) &&
		(q.State == "" || task.State == q.State) &&
		(q.UpdatedAfter.IsZero() || !task.Updated.Before(q.UpdatedAfter))
}

// listsBefore reports whether a comes before b in List order.
func listsBefore(a, b Task) bool {
	if !a.Updated.Equal(b.Updated) {
		return a.Updated.After(b.Updated)
	}
	return a.ID < b.ID
}

func sortListOrder(tasks []Task) {
	slices.SortFunc(tasks, func(a, b Task) int {
		if c := b.Updated.Compare(a.Updated); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}
