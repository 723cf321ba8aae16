package canned

import (
	"strconv"
	"strings"
)

// ContextID is the context of every canned task.
const ContextID = "ctx-bench-7f3c2a"

var (
	longAsk    = strings.Repeat("Please summarise the attached quarterly report for the board. ", 4)
	longAnswer = strings.Repeat("Revenue grew eleven percent while costs stayed flat. ", 6)
	askData    = `{"format":"bullets","maxWords":200,"sections":["revenue","costs","outlook"]}`
)

// The task a send or get answers, in each dialect: the same task, with
// the 0.x timestamp as Python SDKs write it so that translating it does
// the work real traffic needs.
var (
	taskV03 = newTemplate(`{"kind":"task","id":"` + taskSlot + `","contextId":"` + ContextID + `",` +
		`"status":{"state":"completed","timestamp":"2025-07-31T12:00:00.123456+00:00",` +
		`"message":{"kind":"message","messageId":"msg-status","role":"agent","taskId":"` + taskSlot + `","contextId":"` + ContextID + `",` +
		`"parts":[{"kind":"text","text":"Done."}]}},` +
		`"history":[` +
		`{"kind":"message","messageId":"msg-user-1","role":"user","taskId":"` + taskSlot + `","contextId":"` + ContextID + `",` +
		`"parts":[{"kind":"text","text":"` + longAsk + `"},{"kind":"data","data":` + askData + `}]},` +
		`{"kind":"message","messageId":"msg-agent-1","role":"agent","taskId":"` + taskSlot + `","contextId":"` + ContextID + `",` +
		`"parts":[{"kind":"text","text":"Working on the summary."}]}],` +
		`"artifacts":[{"artifactId":"art-summary","name":"summary","description":"Board summary",` +
		`"parts":[{"kind":"text","text":"` + longAnswer + `"},` +
		`{"kind":"file","file":{"uri":"https://files.example.com/reports/summary.pdf","mimeType":"application/pdf","name":"summary.pdf"}},` +
		`{"kind":"data","data":{"words":180,"sections":["revenue","costs","outlook"]}}],"metadata":{"words":180}}],` +
		`"metadata":{"owner":"user-42","costCents":1375}}`)

	taskV10 = newTemplate(`{"id":"` + taskSlot + `","contextId":"` + ContextID + `",` +
		`"status":{"state":"TASK_STATE_COMPLETED","timestamp":"2025-07-31T12:00:00.123456Z",` +
		`"message":{"messageId":"msg-status","role":"ROLE_AGENT","taskId":"` + taskSlot + `","contextId":"` + ContextID + `",` +
		`"parts":[{"text":"Done."}]}},` +
		`"history":[` +
		`{"messageId":"msg-user-1","role":"ROLE_USER","taskId":"` + taskSlot + `","contextId":"` + ContextID + `",` +
		`"parts":[{"text":"` + longAsk + `"},{"data":` + askData + `}]},` +
		`{"messageId":"msg-agent-1","role":"ROLE_AGENT","taskId":"` + taskSlot + `","contextId":"` + ContextID + `",` +
		`"parts":[{"text":"Working on the summary."}]}],` +
		`"artifacts":[{"artifactId":"art-summary","name":"summary","description":"Board summary",` +
		`"parts":[{"text":"` + longAnswer + `"},` +
		`{"url":"https://files.example.com/reports/summary.pdf","mediaType":"application/pdf","filename":"summary.pdf"},` +
		`{"data":{"words":180,"sections":["revenue","costs","outlook"]}}],"metadata":{"words":180}}],` +
		`"metadata":{"owner":"user-42","costCents":1375}}`)

	sendResultV10 = newTemplate(`{"task":` + string(joinTemplate(taskV10)) + `}`)
)

// joinTemplate turns a template back into its source, holes included.
func joinTemplate(t template) []byte {
	return t.appendTo(nil, []byte(taskSlot))
}

// Request bodies, in each dialect. The message is the same in both.
var (
	// A message's id is the request's own (every SDK makes a fresh one per
	// message): a repeated id is a retry, which the gateway deduplicates.
	messageV03 = `{"kind":"message","messageId":"` + messageIDSlot + `","role":"user","contextId":"` + ContextID + `",` +
		`"parts":[{"kind":"text","text":"` + longAsk + `"},{"kind":"data","data":` + askData + `}],` +
		`"metadata":{"skillId":"summarize","locale":"en-GB"}}`
	messageV10 = `{"messageId":"` + messageIDSlot + `","role":"ROLE_USER","contextId":"` + ContextID + `",` +
		`"parts":[{"text":"` + longAsk + `"},{"data":` + askData + `}],` +
		`"metadata":{"skillId":"summarize","locale":"en-GB"}}`
	requestMetadata = `"metadata":{"traceId":"4bf92f3577b34da6a3ce929d0e0e4736","client":"loadbench/1"`
)

// Dialect is a wire dialect of A2A, as the benchmark names it.
type Dialect string

// The dialects.
const (
	V03 Dialect = "0.3"
	V10 Dialect = "1.0"
)

// Op is a call the canned backend answers.
type Op string

// The calls.
const (
	Send   Op = "send"
	Get    Op = "get"
	Stream Op = "stream"
)

// StreamShape is what a stream request asks the backend for.
type StreamShape struct {
	// Events is how many events the stream has, the last one completing
	// the task. At least 2; 0 means DefaultStreamEvents.
	Events int
	// IntervalMicros is the pause between events; 0 sends them back to back.
	IntervalMicros int
	// StartMicros, when set, is the Unix time in microseconds at which the
	// first event is due, the others following every IntervalMicros from
	// it: a client that gives its streams evenly spread start times keeps
	// their events evenly spread, however the opening of the streams
	// bunched up. 0 starts when the request arrives.
	StartMicros int64
	// Hold sends the first event and then keeps the stream open, silent,
	// until the caller leaves.
	Hold bool
}

// messageIDSlot marks where a request's message takes its id.
const messageIDSlot = "\x00MSG\x00"

// DefaultStreamEvents is the length of a stream that asks for no length.
const DefaultStreamEvents = 50

// Method is op's JSON-RPC method in dialect d.
func Method(d Dialect, op Op) string {
	v10 := d == V10
	switch op {
	case Get:
		return pick(v10, "GetTask", "tasks/get")
	case Stream:
		return pick(v10, "SendStreamingMessage", "message/stream")
	}
	return pick(v10, "SendMessage", "message/send")
}

func pick(v10 bool, a, b string) string {
	if v10 {
		return a
	}
	return b
}

// Request is a JSON-RPC request to the canned agent.
type Request struct {
	Dialect Dialect
	Op      Op
	// ID is the JSON-RPC id, a string.
	ID string
	// TaskID is the task a get asks for.
	TaskID string
	// Stream is the shape a stream asks for.
	Stream StreamShape
}

// Append writes the request's JSON body.
func (r Request) Append(dst []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":"`...)
	dst = append(dst, r.ID...)
	dst = append(dst, `","method":"`...)
	dst = append(dst, Method(r.Dialect, r.Op)...)
	dst = append(dst, `","params":`...)
	if r.Op == Get {
		dst = append(dst, `{"id":"`...)
		dst = append(dst, r.TaskID...)
		return append(dst, `","historyLength":10}}`...)
	}
	msg := messageV03
	if r.Dialect == V10 {
		msg = messageV10
	}
	head, tail, _ := strings.Cut(msg, messageIDSlot)
	dst = append(dst, `{"message":`...)
	dst = append(dst, head...)
	dst = append(dst, "msg-"...)
	dst = append(dst, r.ID...)
	dst = append(dst, tail...)
	if r.Op == Send {
		if r.Dialect == V10 {
			dst = append(dst, `,"configuration":{"acceptedOutputModes":["text/plain","application/json"],"historyLength":10}`...)
		} else {
			dst = append(dst, `,"configuration":{"acceptedOutputModes":["text/plain","application/json"],"blocking":true,"historyLength":10}`...)
		}
	}
	dst = append(dst, ',')
	dst = append(dst, requestMetadata...)
	if r.Op == Stream {
		dst = append(dst, `,"bench":{"events":`...)
		dst = strconv.AppendInt(dst, int64(r.Stream.Events), 10)
		dst = append(dst, `,"intervalUs":`...)
		dst = strconv.AppendInt(dst, int64(r.Stream.IntervalMicros), 10)
		if r.Stream.StartMicros != 0 {
			dst = append(dst, `,"startUs":`...)
			dst = strconv.AppendInt(dst, r.Stream.StartMicros, 10)
		}
		dst = append(dst, `,"hold":`...)
		dst = strconv.AppendBool(dst, r.Stream.Hold)
		dst = append(dst, '}')
	}
	return append(dst, `}}}`...)
}
