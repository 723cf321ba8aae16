package normalize

import (
	"strconv"
	"time"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/jsonscan"
)

// The documents below are what the gateway writes on its own account, for
// the emulations in package proxy (proxy/emulate.go says what each emulates
// for which dialect pair): requests it sends a backend that the caller did
// not, and answers it assembles from what the backend did say.

// TaskParams returns the params of op (GetTask or ListPushConfigs) for
// the task taskID of tenant ("" for none; 0.x has no tenants) in dialect
// to. historyLength is the history the caller wants back from a GetTask;
// negative means all of it.
func TaskParams(op dialect.Op, to dialect.ID, tenant, taskID string, historyLength int) ([]byte, error) {
	canon := appendTenant([]byte{'{'}, tenant)
	switch op {
	case dialect.GetTask:
		canon = gjson.AppendJSONString(append(canon, `"id":`...), taskID)
		if historyLength >= 0 {
			canon = strconv.AppendInt(append(canon, `,"historyLength":`...), int64(historyLength), 10)
		}
	case dialect.ListPushConfigs:
		canon = gjson.AppendJSONString(append(canon, `"taskId":`...), taskID)
	default:
		return nil, Errorf(dialect.ErrInternal, "the gateway writes no %s params of its own", op)
	}
	canon = append(canon, '}')
	out, _, err := Params(op, dialect.V10, to, canon)
	return out, err
}

// FirstPushConfig returns the first config of a ListPushConfigs result in
// dialect d, and false when the list is empty.
func FirstPushConfig(d dialect.ID, list []byte) ([]byte, bool) {
	root := jsonscan.Parse(list)
	if d == dialect.V10 {
		root = jsonscan.Member(root, "configs")
	}
	var first gjson.Result
	if root.IsArray() {
		jsonscan.Each(root, func(_, v gjson.Result) bool { first = v; return false })
	}
	if !first.IsObject() {
		return nil, false
	}
	return []byte(first.Raw), true
}

// HoldsPushConfigBut reports whether a ListPushConfigs result in dialect d,
// as AppendResult wrote it, holds a config of another id than id.
func HoldsPushConfigBut(d dialect.ID, list []byte, id string) bool {
	root := jsonscan.Parse(list)
	path := "pushNotificationConfig"
	if d == dialect.V10 {
		root, path = jsonscan.Member(root, "configs"), ""
	}
	other := false
	jsonscan.Each(root, func(_, v gjson.Result) bool {
		if path != "" {
			v = jsonscan.Member(v, path)
		}
		other = jsonscan.Member(v, "id").Str != id
		return !other
	})
	return other
}

// TaskEvent wraps a canonical (1.0) task as the StreamResponse that opens
// a 1.0 subscription.
func TaskEvent(task []byte) []byte {
	return append(append([]byte(`{"task":`), task...), '}')
}

// WithFinalFlag sets the 0.x final flag in a canonical status update event,
// for the 0.3 gRPC and HTTP+JSON front ends, which read the core's 1.0
// events and write the 0.3 proto's: 1.0 has no flag, and one derived from
// the state would end an input-required turn a 0.x backend said goes on.
// Only those front ends are given it, never a 1.0 peer.
func WithFinalFlag(event []byte, final bool) ([]byte, error) {
	out, err := sjson.SetBytes(event, "statusUpdate.final", final)
	if err != nil {
		return nil, AsError(err, dialect.ErrInternal)
	}
	return out, nil
}

// SetContextID sets message.contextId of send params, in either dialect
// (both spell it so).
func SetContextID(params []byte, contextID string) ([]byte, error) {
	out, err := sjson.SetBytes(params, "message.contextId", contextID)
	if err != nil {
		return nil, AsError(err, dialect.ErrInternal)
	}
	return out, nil
}

// WithoutArtifacts returns a task without its artifacts member.
func WithoutArtifacts(task []byte) ([]byte, error) {
	if !gjson.GetBytes(task, "artifacts").Exists() {
		return task, nil
	}
	out, err := sjson.DeleteBytes(task, "artifacts")
	if err != nil {
		return nil, AsError(err, dialect.ErrInternal)
	}
	return out, nil
}

// TaskStatus is a canonical task's status: its 1.0 state name ("" when it
// has none) and its time (zero when it has none or it does not parse),
// read in one scan of the task.
func TaskStatus(task []byte) (state string, at time.Time) {
	status := jsonscan.Member(jsonscan.Parse(task), "status")
	at, _ = time.Parse(time.RFC3339Nano, jsonscan.Member(status, "timestamp").Str)
	return jsonscan.Member(status, "state").Str, at
}

// TaskPage is one page of a ListTasks answer, its tasks canonical (1.0).
type TaskPage struct {
	Tasks         [][]byte
	NextPageToken string
	PageSize      int
	TotalSize     int
}

// AppendListTasksResponse appends the JSON-RPC response carrying page, the
// ListTasks result in 1.0 (the only dialect that has ListTasks), with every
// member the spec requires, even at its zero value (see taskList).
func AppendListTasksResponse(dst, id []byte, page TaskPage) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = appendID(dst, id)
	dst = append(dst, `,"result":{"tasks":[`...)
	for i, t := range page.Tasks {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, t...)
	}
	dst = append(dst, `],"nextPageToken":`...)
	dst = gjson.AppendJSONString(dst, page.NextPageToken)
	dst = append(dst, `,"pageSize":`...)
	dst = strconv.AppendInt(dst, int64(page.PageSize), 10)
	dst = append(dst, `,"totalSize":`...)
	dst = strconv.AppendInt(dst, int64(page.TotalSize), 10)
	return append(dst, "}}"...)
}

// RepeatedSnapshot compares a 1.0 subscription's opening task event, sent
// (TaskEvent's), with the backend's first event got, already in 1.0: a
// 0.x resubscribe may open with the task too (the JS 0.2.5 and 0.3 servers
// do, Python 0.3 does not). It reports repeat when got is a task event for
// the same task; update is then nil when got's status is the one sent, or
// else the status update that carries got's newer status, so the caller
// sees the task once and misses no change.
func RepeatedSnapshot(sent, got []byte) (update []byte, repeat bool) {
	g := jsonscan.Member(jsonscan.Parse(got), "task")
	s := jsonscan.Member(jsonscan.Parse(sent), "task")
	if !g.IsObject() || jsonscan.Member(g, "id").Str != jsonscan.Member(s, "id").Str {
		return nil, false
	}
	gs, ss := jsonscan.Member(g, "status"), jsonscan.Member(s, "status")
	if jsonscan.Member(gs, "state").Str == jsonscan.Member(ss, "state").Str &&
		jsonscan.Member(gs, "timestamp").Str == jsonscan.Member(ss, "timestamp").Str {
		return nil, true
	}
	update = gjson.AppendJSONString(append(update, `{"statusUpdate":{"taskId":`...), jsonscan.Member(g, "id").Str)
	update = gjson.AppendJSONString(append(update, `,"contextId":`...), jsonscan.Member(g, "contextId").Str)
	update = append(update, `,"status":`...)
	update = append(update, gs.Raw...)
	return append(update, "}}"...), true
}

// TrimEventHistory is TrimHistory for a stream event in dialect d: a task
// event opening a send's stream keeps what the send's historyLength asked.
func TrimEventHistory(d dialect.ID, event []byte, n int) ([]byte, error) {
	return TrimHistory(dialect.SendMessage, d, event, n)
}
