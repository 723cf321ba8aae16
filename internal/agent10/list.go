package agent10

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/a2agate/gateway/internal/agentcore"
)

// ListTasks page sizes (a2a.proto, ListTasksRequest.page_size).
const (
	defaultPageSize = 50
	maxPageSize     = 100
)

// listed is one task of a ListTasks result; its status time is the sort
// key.
type listed = agentcore.Task[message, artifact]

// listTasks answers ListTasks: the tasks matching the filters, most recently
// updated first, one page at a time. Artifacts are left out unless
// includeArtifacts is set; nextPageToken is "" on the last page.
func (a *Agent) listTasks(_ *http.Request, p *listTasksRequest) (any, *agentcore.Error) {
	pageSize := int32(defaultPageSize)
	if p.PageSize != nil {
		pageSize = *p.PageSize
	}
	if pageSize < 1 || pageSize > maxPageSize {
		return nil, errInvalidParams(fmt.Errorf("pageSize: must be between 1 and %d, got %d", maxPageSize, pageSize))
	}
	if err := agentcore.NotNegative("historyLength", p.HistoryLength); err != nil {
		return nil, errInvalidParams(err)
	}
	if p.Status != "" && !isStateName(p.Status) {
		return nil, errInvalidParams(fmt.Errorf("status: unknown TaskState %q", p.Status))
	}
	var after time.Time
	if p.StatusTimestampAfter != "" {
		t, err := time.Parse(time.RFC3339Nano, p.StatusTimestampAfter)
		if err != nil {
			return nil, errInvalidParams(fmt.Errorf("statusTimestampAfter: must be an RFC 3339 timestamp, got %q", p.StatusTimestampAfter))
		}
		after = t
	}
	var cursor *pageCursor
	if p.PageToken != "" {
		c, err := parsePageToken(p.PageToken)
		if err != nil {
			return nil, errInvalidParams(err)
		}
		cursor = &c
	}

	matches := a.core.List(func(t *listed) bool {
		return (p.ContextID == "" || t.ContextID == p.ContextID) &&
			(p.Status == "" || p.Status == stateUnspecified || stateNames[t.Status.State] == p.Status) &&
			!t.Status.Time.Before(after)
	})
	slices.SortFunc(matches, func(x, y listed) int {
		return cmp.Or(y.Status.Time.Compare(x.Status.Time), strings.Compare(x.ID, y.ID))
	})

	start := 0
	if cursor != nil {
		start = len(matches)
		for i, m := range matches {
			if cursor.precedes(m) {
				start = i
				break
			}
		}
	}
	page := matches[start:min(start+int(pageSize), len(matches))]
	resp := listTasksResponse{
		Tasks:     make([]task, len(page)),
		PageSize:  pageSize,
		TotalSize: int32(len(matches)),
	}
	for i, m := range page {
		if !p.IncludeArtifacts {
			m.Artifacts = nil
		}
		resp.Tasks[i] = renderTask(m, p.HistoryLength)
	}
	if end := start + len(page); end < len(matches) {
		resp.NextPageToken = pageCursor{updated: page[len(page)-1].Status.Time, id: page[len(page)-1].ID}.token()
	}
	return resp, nil
}

// isStateName reports whether name is a TaskState name.
func isStateName(name string) bool {
	if name == stateUnspecified {
		return true
	}
	for _, n := range stateNames {
		if n == name {
			return true
		}
	}
	return false
}
