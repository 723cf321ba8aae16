package agentcore_test

import (
	"net/http/httptest"
	"testing"

	"github.com/a2agate/gateway/internal/agentcore"
	"github.com/a2agate/gateway/internal/agenttest"
)

func TestGetTask(t *testing.T) {
	forEachAgent(t, func(t *testing.T, d dialect, srv *httptest.Server) {
		first := d.task(t, d.Call(t, srv, d.send, d.sendText("input")).(obj))
		reply := d.userMessage("Grace")
		reply["taskId"] = first["id"]
		done := d.task(t, d.Call(t, srv, d.send, obj{"message": reply}).(obj))

		params := obj{"id": first["id"]}
		for k, v := range d.ignoredGetParam {
			params[k] = v
		}
		agenttest.WantJSON(t, d.get, d.Call(t, srv, d.get, params), done) // the bare task, no wrapper

		all := []any{"input", agentcore.Question, "Grace"}
		zero := []any(nil) // no history key at all
		if d.zeroHistoryAll {
			zero = all
		}
		tests := []struct {
			name   string
			length any
			want   []any // history texts; nil: no history key at all
		}{
			{"absent", nil, all},
			{"zero", 0, zero},
			{"last one", 1, []any{"Grace"}},
			{"last two", 2, []any{agentcore.Question, "Grace"}},
			{"more than there is", 10, all},
		}
		for _, tt := range tests {
			params := obj{"id": first["id"]}
			if tt.length != nil {
				params["historyLength"] = tt.length
			}
			h, present := d.Call(t, srv, d.get, params).(obj)["history"]
			if tt.want == nil {
				if present {
					t.Fatalf("%s: history = %v, want the key omitted", tt.name, h)
				}
				continue
			}
			agenttest.WantJSON(t, tt.name, agenttest.FirstTexts(t, h), tt.want)
		}

		e := d.CallErr(t, srv, d.get, obj{"id": "missing"})
		d.wantCode(t, e, agentcore.CodeTaskNotFound)
		agenttest.WantJSON(t, "error detail", d.detail(t, e), obj{"taskId": "missing"})
		d.wantCode(t, d.CallErr(t, srv, d.get, obj{}), agentcore.CodeInvalidParams)
		d.wantCode(t, d.CallErr(t, srv, d.get, obj{"id": first["id"], "historyLength": -1}), agentcore.CodeInvalidParams)
	})
}

func TestCancelTask(t *testing.T) {
	forEachAgent(t, func(t *testing.T, d dialect, srv *httptest.Server) {
		asking := d.task(t, d.Call(t, srv, d.send, d.sendText("input")).(obj))
		res := d.Call(t, srv, d.cancel, obj{"id": asking["id"], "metadata": obj{"why": "test"}}).(obj)
		d.wantState(t, "canceling an input-required task", res, "canceled")
		d.wantState(t, "get after the cancel", d.Call(t, srv, d.get, obj{"id": asking["id"]}).(obj), "canceled")

		for _, text := range []string{"finish", "fail"} {
			done := d.task(t, d.Call(t, srv, d.send, d.sendText(text)).(obj))
			e := d.CallErr(t, srv, d.cancel, obj{"id": done["id"]})
			d.wantCode(t, e, agentcore.CodeTaskNotCancelable)
			agenttest.WantJSON(t, "error detail", d.detail(t, e), obj{"taskId": done["id"], "state": agenttest.Path(t, done, "status", "state")})
		}
		e := d.CallErr(t, srv, d.cancel, obj{"id": "missing"})
		d.wantCode(t, e, agentcore.CodeTaskNotFound)
		agenttest.WantJSON(t, "error detail", d.detail(t, e), obj{"taskId": "missing"})
		d.wantCode(t, d.CallErr(t, srv, d.cancel, obj{}), agentcore.CodeInvalidParams)
	})
}

func TestSubscribe(t *testing.T) {
	forEachAgent(t, func(t *testing.T, d dialect, srv *httptest.Server) {

		// A running task: the task first, then its updates to the end.
		first := d.OpenStream(t, srv, d.stream, d.sendText("wait"))
		snap := d.next(t, first, "task")
		d.next(t, first, "status") // working
		s := d.OpenStream(t, srv, d.subscribe, obj{"id": snap["id"]})
		if ev := d.next(t, s, "task"); agenttest.Str(t, ev, "status", "state") != d.states["working"] || ev["id"] != snap["id"] {
			t.Fatalf("first subscribe event = %v, want the working task", ev)
		}
		d.Call(t, srv, d.cancel, obj{"id": snap["id"]})
		for _, stream := range []*agenttest.SSE{s, first} {
			d.nextStatus(t, stream, "canceled", true)
			stream.WantEnd()
		}

		// An interrupted task: the task event alone.
		asking := d.task(t, d.Call(t, srv, d.send, d.sendText("input")).(obj))
		s = d.OpenStream(t, srv, d.subscribe, obj{"id": asking["id"]})
		agenttest.WantJSON(t, "task event", d.next(t, s, "task"), asking)
		s.WantEnd()

		// A terminal task: the same, or an error naming it and its state.
		done := d.task(t, d.Call(t, srv, d.send, d.sendText("finish")).(obj))
		if d.terminalSubscribe == 0 {
			s = d.OpenStream(t, srv, d.subscribe, obj{"id": done["id"]})
			agenttest.WantJSON(t, "terminal task event", d.next(t, s, "task"), done)
			s.WantEnd()
		} else {
			e := d.CallErr(t, srv, d.subscribe, obj{"id": done["id"]})
			d.wantCode(t, e, d.terminalSubscribe)
			agenttest.WantJSON(t, "error detail", d.detail(t, e), obj{"taskId": done["id"], "state": d.states["completed"]})
		}

		e := d.CallErr(t, srv, d.subscribe, obj{"id": "missing"})
		d.wantCode(t, e, agentcore.CodeTaskNotFound)
		agenttest.WantJSON(t, "error detail", d.detail(t, e), obj{"taskId": "missing"})
	})
}

func TestRequiredFields(t *testing.T) {
	forEachAgent(t, func(t *testing.T, d dialect, srv *httptest.Server) {
		invalidParams := func(t *testing.T, e obj) { d.wantCode(t, e, agentcore.CodeInvalidParams) }
		for _, tt := range d.required {
			d.WantRefused(t, srv, []string{tt.method}, invalidParams, tt.params, tt.detail)
		}
	})
}
