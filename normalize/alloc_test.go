package normalize

import (
	"testing"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/testrace"
)

// TestAllocationBudgets locks in the fast paths. Same-dialect traffic
// passes through without allocating; a translation allocates its output
// (the writer's buffer is pooled) and little else. A budget is what was
// measured plus a margin of one, so a change that adds allocations per
// member or per part fails here long before a benchmark is read.
func TestAllocationBudgets(t *testing.T) {
	if testrace.Enabled {
		t.Skip("the race detector allocates")
	}
	if testing.Short() {
		t.Skip("allocation budgets are not checked in -short mode")
	}
	env03 := mustParseRequest(t, benchSendV03)
	env10 := mustParseRequest(t, benchSendV10)
	task03 := mustParseReply(t, benchTaskV03).Result
	task10 := mustParseReply(t, benchTaskV10).Result
	status10 := []byte(`{"statusUpdate":{"taskId":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING","message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"50%"}]}}}}`)
	status03 := []byte(`{"kind":"status-update","taskId":"t1","contextId":"c1","status":{"state":"working","message":{"kind":"message","messageId":"m","role":"agent","parts":[{"kind":"text","text":"50%"}]}},"final":false}`)
	errV10 := []byte(`{"code":-32001,"message":"Task not found","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org","metadata":{"taskId":"t9"}}]}`)
	kvErr := &Error{Kind: dialect.ErrTaskNotFound, Message: "task not found", Metadata: []KV{{"taskId", "t9"}}}
	errBuf := make([]byte, 0, 512)

	tests := []struct {
		name   string
		budget float64
		// passThrough is the input the call must hand back uncopied; nil
		// for calls that produce new bytes.
		passThrough []byte
		run         func() []byte
	}{
		// Pass-through: nothing to rewrite, nothing allocated.
		{"Params 1.0 to 1.0", 0, env10.Params, func() []byte { return params(t, env10.Op, dialect.V10, dialect.V10, env10.Params) }},
		{"Params 0.x to 0.x", 0, env03.Params, func() []byte { return params(t, env03.Op, dialect.V03, dialect.V03, env03.Params) }},
		{"Result 1.0 to 1.0", 0, task10, func() []byte { return result(t, dialect.V10, dialect.V10, task10) }},
		{"Result 0.x to 0.x", 0, task03, func() []byte { return result(t, dialect.V03, dialect.V03, task03) }},
		{"Event 1.0 to 1.0", 0, status10, func() []byte { return event(t, dialect.V10, dialect.V10, status10) }},
		{"Event 0.x to 0.x", 0, status03, func() []byte { return event(t, dialect.V03, dialect.V03, status03) }},
		{"errorObject 1.0 to 1.0", 0, errV10, func() []byte { return errorObjectOf(t, dialect.V10, dialect.V10, errV10) }},
		{"Valid", 0, nil, func() []byte {
			if !Valid(benchTaskV03) {
				t.Fatal("not valid")
			}
			return nil
		}},
		{"AppendError", 0, nil, func() []byte { errBuf = AppendError(errBuf[:0], dialect.V10, kvErr); return nil }},
		// Translation: the output, measured 1.
		{"Params 0.x to 1.0", 2, nil, func() []byte { return params(t, env03.Op, dialect.V03, dialect.V10, env03.Params) }},
		{"Params 1.0 to 0.x", 2, nil, func() []byte { return params(t, env10.Op, dialect.V10, dialect.V03, env10.Params) }},
		{"Result 0.x to 1.0", 2, nil, func() []byte { return result(t, dialect.V03, dialect.V10, task03) }},
		{"Result 1.0 to 0.x", 2, nil, func() []byte { return result(t, dialect.V10, dialect.V03, task10) }},
		{"Event 1.0 to 0.x", 2, nil, func() []byte { return event(t, dialect.V10, dialect.V03, status10) }},
		{"Event 0.x to 1.0", 2, nil, func() []byte { return event(t, dialect.V03, dialect.V10, status03) }},
		{"errorObject 1.0 to 0.x", 2, nil, func() []byte { return errorObjectOf(t, dialect.V10, dialect.V03, errV10) }},
		// A request copies its id out of the body, and a reply holds the
		// spans of a task with ten history messages past Spans' room:
		// measured 1 each.
		{"ParseRequest", 2, nil, func() []byte { mustParseRequest(t, benchSendV03); return nil }},
		{"ParseReply", 2, nil, func() []byte { mustParseReply(t, benchTaskV03); return nil }},
		{"Inspect", 0, nil, func() []byte { // reads only
			if _, err := Inspect(status10); err != nil {
				t.Fatal(err)
			}
			return nil
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.passThrough != nil {
				if out := tt.run(); !sameSlice(tt.passThrough, out) {
					t.Fatalf("not passed through: %s", out)
				}
			}
			got := testing.AllocsPerRun(100, func() { tt.run() })
			if got > tt.budget {
				t.Errorf("%.1f allocations per call, budget %.0f", got, tt.budget)
			}
			t.Logf("%.1f allocations per call, budget %.0f", got, tt.budget)
		})
	}
}

func mustParseRequest(t *testing.T, body []byte) Envelope {
	env, err := ParseRequest(body)
	if err != nil {
		t.Fatal(err)
	}
	return env
}

func mustParseReply(t *testing.T, body []byte) Reply {
	r, err := ParseReply(body)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func params(t *testing.T, op dialect.Op, from, to dialect.ID, in []byte) []byte {
	out, _, err := Params(op, from, to, in)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func result(t *testing.T, from, to dialect.ID, in []byte) []byte {
	out, err := Result(dialect.GetTask, from, to, in)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func event(t *testing.T, from, to dialect.ID, in []byte) []byte {
	out, err := Event(from, to, in, false)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func errorObjectOf(t *testing.T, from, to dialect.ID, in []byte) []byte {
	out, err := errorObject(from, to, in)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
