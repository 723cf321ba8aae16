package canned

import (
	"bytes"
	"strconv"
)

const (
	streamTimestampV03 = `"2025-07-31T12:00:00.123456+00:00"`
	streamTimestampV10 = `"2025-07-31T12:00:00.123456Z"`
	chunkText          = "Revenue grew eleven percent while costs stayed flat; the outlook is steady. "
)

// appendEvent writes event i of a stream of n events as one SSE event,
// stamped with ts: first the task, then artifact and status updates in
// turn, and last the status update that completes the task.
func appendEvent(dst []byte, d Dialect, rpcID, taskID []byte, i, n int, ts int64) []byte {
	v10 := d == V10
	dst = append(dst, `data: {"jsonrpc":"2.0","id":`...)
	dst = append(dst, rpcID...)
	dst = append(dst, `,"result":`...)
	switch {
	case i == 0:
		dst = append(dst, pick(v10, `{"task":{`, `{"kind":"task",`)...)
		dst = append(dst, `"id":"`...)
		dst = append(dst, taskID...)
		dst = append(dst, `","contextId":"`+ContextID+`","status":{"state":`...)
		dst = append(dst, pick(v10, `"TASK_STATE_WORKING","timestamp":`+streamTimestampV10, `"working","timestamp":`+streamTimestampV03)...)
		dst = append(dst, '}')
	case i < n-1 && i%2 == 1:
		dst = append(dst, pick(v10, `{"artifactUpdate":{`, `{"kind":"artifact-update",`)...)
		dst = appendUpdateHead(dst, taskID)
		dst = append(dst, `"artifact":{"artifactId":"art-stream","parts":[`...)
		dst = append(dst, pick(v10, `{"text":"`+chunkText+`"}`, `{"kind":"text","text":"`+chunkText+`"}`)...)
		dst = append(dst, `]},"append":`...)
		dst = strconv.AppendBool(dst, i > 1)
		dst = append(dst, `,"lastChunk":false`...)
	default:
		dst = append(dst, pick(v10, `{"statusUpdate":{`, `{"kind":"status-update",`)...)
		dst = appendUpdateHead(dst, taskID)
		last := i == n-1
		switch {
		case v10 && last:
			dst = append(dst, `"status":{"state":"TASK_STATE_COMPLETED","timestamp":`+streamTimestampV10+`}`...)
		case v10:
			dst = append(dst, `"status":{"state":"TASK_STATE_WORKING","timestamp":`+streamTimestampV10+`}`...)
		case last:
			dst = append(dst, `"status":{"state":"completed","timestamp":`+streamTimestampV03+`},"final":true`...)
		default:
			dst = append(dst, `"status":{"state":"working","timestamp":`+streamTimestampV03+`},"final":false`...)
		}
	}
	dst = append(dst, `,"metadata":{"ts":`...)
	dst = strconv.AppendInt(dst, ts, 10)
	dst = append(dst, `}}`...)
	if v10 {
		dst = append(dst, '}')
	}
	return append(dst, "}\n\n"...)
}

func appendUpdateHead(dst, taskID []byte) []byte {
	dst = append(dst, `"taskId":"`...)
	dst = append(dst, taskID...)
	return append(dst, `","contextId":"`+ContextID+`",`...)
}

// tsKey is how an event's stamp appears in its JSON, in either dialect.
var tsKey = []byte(`"ts":`)

// EventStamp returns the stamp of an event's data, in nanoseconds since
// the Unix epoch, and whether it has one. It looks for the last "ts" key,
// which is where both dialects, translated or not, leave it.
func EventStamp(data []byte) (int64, bool) {
	i := bytes.LastIndex(data, tsKey)
	if i < 0 {
		return 0, false
	}
	var ts int64
	digits := 0
	for _, c := range data[i+len(tsKey):] {
		if c < '0' || c > '9' {
			break
		}
		ts = ts*10 + int64(c-'0')
		digits++
	}
	return ts, digits > 0
}
