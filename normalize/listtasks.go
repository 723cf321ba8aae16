package normalize

import (
	"time"

	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/jsonscan"
)

const (
	ltTenant = iota
	ltContextID
	ltStatus
	ltPageSize
	ltPageToken
	ltHistoryLength
	ltStatusTimestampAfter
	ltIncludeArtifacts
)

var listTasksKeys = [...]keySpec{
	ltTenant:               {"tenant", ""},
	ltContextID:            {"contextId", "context_id"},
	ltStatus:               {"status", ""},
	ltPageSize:             {"pageSize", "page_size"},
	ltPageToken:            {"pageToken", "page_token"},
	ltHistoryLength:        {"historyLength", "history_length"},
	ltStatusTimestampAfter: {"statusTimestampAfter", "status_timestamp_after"},
	ltIncludeArtifacts:     {"includeArtifacts", "include_artifacts"},
}

// ListQuery is a validated 1.0 ListTasks request.
type ListQuery struct {
	// Tenant is the tenant the caller lists below ("" for none): each
	// listed task is read from its backend under it.
	Tenant           string
	ContextID        string
	State            string // 1.0 state name, "" for any
	PageSize         int    // 1..100
	PageToken        string
	HistoryLength    int
	HasHistoryLength bool
	UpdatedAfter     time.Time
	IncludeArtifacts bool
}

// ListTasksDefaultPageSize and ListTasksMaxPageSize bound ListTasks pages (1.0 §3.1.4).
const (
	ListTasksDefaultPageSize = 50
	ListTasksMaxPageSize     = 100
)

// ParseListTasks validates 1.0 ListTasks params. Failures are *Error of kind
// InvalidParams.
func ParseListTasks(params []byte) (ListQuery, error) {
	q := ListQuery{PageSize: ListTasksDefaultPageSize}
	root := gjson.Result{Type: gjson.JSON, Raw: "{}"}
	if len(params) > 0 {
		root = jsonscan.Parse(params)
	}
	if err := readListTasks(root, &q); err != nil {
		return q, &Error{Kind: dialect.ErrInvalidParams, Message: "invalid params: " + at(err, "params").Error(), Err: err}
	}
	return q, nil
}

func readListTasks(root gjson.Result, q *ListQuery) error {
	var m members
	if err := collect(root, listTasksKeys[:], &m); err != nil {
		return err
	}
	if m.unknown {
		// The gateway answers ListTasks from its index, so a member it does
		// not read reaches nobody: a misspelled filter would list every task.
		return fail("has members ListTasks does not have: %s (its members are tenant, contextId, status, pageSize, pageToken, historyLength, statusTimestampAfter and includeArtifacts)",
			unknownNames(root, listTasksKeys[:]))
	}
	v := &m.vals
	if x := v[ltTenant]; x.Exists() {
		if err := wantString(x, "tenant"); err != nil {
			return err
		}
		q.Tenant = x.Str
	}
	if x := v[ltContextID]; x.Exists() {
		if err := wantString(x, "contextId"); err != nil {
			return err
		}
		q.ContextID = x.Str
	}
	if x := v[ltStatus]; x.Exists() {
		p, err := stateOf(x)
		if err != nil {
			return at(err, "status")
		}
		if p.Number != 0 {
			q.State = p.V10
		}
	}
	if x := v[ltPageSize]; x.Exists() {
		n, ok := int32Of(x)
		if !ok || n < 1 || n > ListTasksMaxPageSize {
			return at(fail("must be a whole number from 1 to %d, got %s", ListTasksMaxPageSize, x.Raw), "pageSize")
		}
		q.PageSize = int(n)
	}
	if x := v[ltPageToken]; x.Exists() {
		if err := wantString(x, "pageToken"); err != nil {
			return err
		}
		q.PageToken = x.Str
	}
	if x := v[ltHistoryLength]; x.Exists() {
		n, ok := int32Of(x)
		if !ok || n < 0 {
			return at(fail("must be a whole number of at least 0, got %s", x.Raw), "historyLength")
		}
		q.HistoryLength, q.HasHistoryLength = int(n), true
	}
	if x := v[ltStatusTimestampAfter]; x.Exists() {
		if x.Type != gjson.String {
			return at(fail("must be an RFC 3339 timestamp string"), "statusTimestampAfter")
		}
		t, err := parseISO8601(x.Str)
		if err != nil {
			return at(fail("%q is not an RFC 3339 timestamp", x.Str), "statusTimestampAfter")
		}
		q.UpdatedAfter = t.UTC()
	}
	if x := v[ltIncludeArtifacts]; x.Exists() {
		if err := wantBool(x, "includeArtifacts"); err != nil {
			return err
		}
		q.IncludeArtifacts = x.Bool()
	}
	return nil
}

func (c *conv) listTasksParams(root gjson.Result) error {
	var q ListQuery
	if err := readListTasks(root, &q); err != nil {
		return err
	}
	var m members
	_ = collect(root, listTasksKeys[:], &m) // read cleanly above
	w := c.w
	w.changed = w.changed || m.renamed
	w.open('{')
	for i, spec := range listTasksKeys {
		x := m.vals[i]
		if !x.Exists() {
			continue
		}
		w.key(spec.camel)
		if i == ltStatus {
			p, _ := stateOf(x)
			c.enum(x, p, dialect.V10)
			continue
		}
		w.raw(x.Raw)
	}
	w.closeObject(root, listTasksKeys[:], m.unknown)
	return nil
}
