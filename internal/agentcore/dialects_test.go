package agentcore_test

import (
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/a2agate/gateway/internal/agent10"
	"github.com/a2agate/gateway/internal/agentcore"
	"github.com/a2agate/gateway/internal/agenttest"
	"github.com/a2agate/gateway/legacyagent"
)

// The behaviours the core gives both agents are tested here once per
// dialect, on the wire, with each dialect's spellings, and the refusals
// only it makes (badSends, required), in its entry below; what only one
// dialect does otherwise is tested in its own package.

type obj = agenttest.Obj

// dialect is how one agent spells what the tests send and read.
type dialect struct {
	name string
	new  func(agentcore.Options) agenttest.Agent
	// Wire is how its clients call.
	agenttest.Wire
	// Method names; foreign is a method of the other dialect.
	send, stream, get, cancel, subscribe, foreign string
	// states spells the neutral state names the tests use; roles the user
	// and agent roles.
	states      map[string]string
	user, agent string
	// finalFlag: status updates carry "final" (0.2.5); else they must not.
	finalFlag bool
	// cardPath is the public card's route, otherPaths the card routes of
	// the other dialect; cardURL reads the card's JSON-RPC endpoint.
	cardPath   string
	otherPaths []string
	cardURL    func(t *testing.T, card obj) string
	// card is what the public card served at url must hold, cardRequired
	// the other keys the dialect requires, cardForeign the other dialect's
	// keys, which it must not have.
	card                      func(url string) obj
	cardRequired, cardForeign []string
	// stepStamps are the status timestamps of a "hello" task paced by a
	// 300ms StepDelay, in a synctest bubble.
	stepStamps []string
	// userMessage is a user message whose only part is text.
	userMessage func(text string) obj
	// agentMessage is the agent's message id holding text, in contextID.
	agentMessage func(id any, text, contextID string) obj
	// reply is the agent's message in a send result, which must hold one.
	reply func(t *testing.T, res obj) obj
	// sendNow is the params of a send that returns the task at once.
	sendNow func(msg obj) obj
	// config is a fresh configuration of a blocking send, with what the
	// dialect requires of one.
	config func() obj
	// textPart is a text part; echoParts are parts of every other kind,
	// which the result artifact copies.
	textPart  func(text string) obj
	echoParts []any
	// task is the task in a send result, which must hold one.
	task func(t *testing.T, res obj) obj
	// event is the kind ("task", "status", "artifact", "message") and body
	// of a stream event.
	event func(t *testing.T, ev obj) (string, obj)
	// notAccepting is the code of a message to a task that waits for none.
	notAccepting int
	// detail is what an error says it is about.
	detail func(t *testing.T, e obj) any
	// reasons, when set, are the google.rpc.ErrorInfo reasons an error of
	// each code must carry as its one data item (1.0).
	reasons map[int]string
	// ignoredGetParam is a params member a get accepts and ignores.
	ignoredGetParam obj
	// zeroHistoryAll: a historyLength of 0 keeps the whole history (0.2.5);
	// else it keeps none and the history key is omitted.
	zeroHistoryAll bool
	// foreignUser is the other dialect's user role; pushKey the send
	// configuration's push config member.
	foreignUser, pushKey string
	// badSends are the sends only this dialect refuses, beside the ones
	// both do (TestSendValidation).
	badSends []badSend
	// terminalSubscribe is the error code of a subscription to a terminal
	// task; 0: it gets the task event alone, as an interrupted task does.
	terminalSubscribe int
	// required are the calls refused for a missing required member.
	required []badCall
}

// badCall is a call to method refused with -32602 and a message naming
// detail.
type badCall struct {
	method string
	params obj
	detail string
}

// badSend is a send that must be refused with -32602 and a message naming
// detail: edit spoils the params of a valid send, whose message is msg.
type badSend struct {
	name   string
	edit   func(params, msg obj)
	detail string
}

// parts sets a message's parts.
func parts(p ...any) func(_, msg obj) { return func(_, msg obj) { msg["parts"] = p } }

// configuration sets a send's configuration.
func configuration(c obj) func(params, _ obj) {
	return func(params, _ obj) { params["configuration"] = c }
}

var dialects = []dialect{
	{
		name:       "0.2.5",
		new:        func(o agentcore.Options) agenttest.Agent { return legacyagent.New(o) },
		send:       "message/send",
		stream:     "message/stream",
		get:        "tasks/get",
		cancel:     "tasks/cancel",
		subscribe:  "tasks/resubscribe",
		foreign:    "SendMessage",
		cardPath:   "/.well-known/agent.json",
		otherPaths: []string{"/.well-known/agent-card.json"},
		cardURL:    func(t *testing.T, card obj) string { return agenttest.Str(t, card, "url") },
		card: func(url string) obj {
			return obj{
				"protocolVersion":                   "0.2.5",
				"name":                              legacyagent.DefaultName,
				"url":                               url,
				"preferredTransport":                "JSONRPC",
				"supportsAuthenticatedExtendedCard": true,
				"capabilities":                      obj{"streaming": true, "pushNotifications": true, "stateTransitionHistory": false},
				"defaultInputModes":                 []any{"text/plain", "application/json", "application/octet-stream"},
			}
		},
		cardRequired: []string{"description", "version", "defaultOutputModes"},
		cardForeign:  []string{"supportedInterfaces", "additionalInterfaces"},
		states: map[string]string{
			"submitted": "submitted", "working": "working", "input-required": "input-required",
			"completed": "completed", "canceled": "canceled", "failed": "failed",
		},
		user: "user", agent: "agent",
		finalFlag: true,
		stepStamps: []string{
			"2000-01-01T00:00:00+00:00", // submitted, at once; no fraction when it is zero
			"2000-01-01T00:00:00.300000+00:00",
			"2000-01-01T00:00:00.900000+00:00", // the artifact took one step
		},
		userMessage: func(text string) obj {
			return obj{"kind": "message", "messageId": "m-" + text, "role": "user", "parts": []any{obj{"kind": "text", "text": text}}}
		},
		agentMessage: func(id any, text, contextID string) obj {
			return obj{"kind": "message", "messageId": id, "role": "agent", "parts": []any{obj{"kind": "text", "text": text}}, "contextId": contextID}
		},
		reply: func(t *testing.T, res obj) obj {
			if res["kind"] != "message" {
				t.Fatalf("result is not a message: %v", res)
			}
			return res
		},
		sendNow: func(msg obj) obj {
			return obj{"message": msg, "configuration": obj{"acceptedOutputModes": []any{}, "blocking": false}}
		},
		config:   func() obj { return obj{"acceptedOutputModes": []any{}} },
		textPart: func(text string) obj { return obj{"kind": "text", "text": text} },
		echoParts: []any{
			obj{"kind": "file", "file": obj{"bytes": "aGVsbG8=", "mimeType": "text/plain", "name": "a.txt"}},
			obj{"kind": "file", "file": obj{"uri": "https://example.com/y.pdf", "mimeType": "application/pdf"}, "metadata": obj{"m": 1}},
			obj{"kind": "data", "data": obj{"k": []any{1, "two", nil}, "big": json.Number("12345678901234567890")}},
		},
		task: func(t *testing.T, res obj) obj {
			if res["kind"] != "task" || agenttest.Str(t, res, "id") == "" {
				t.Fatalf("result is not a task: %v", res)
			}
			return res
		},
		event: func(t *testing.T, ev obj) (string, obj) {
			kinds := map[string]string{"status-update": "status", "artifact-update": "artifact", "task": "task", "message": "message"}
			return kinds[agenttest.Str(t, ev, "kind")], ev
		},
		notAccepting:    agentcore.CodeInvalidParams,
		detail:          func(t *testing.T, e obj) any { return e["data"] },
		ignoredGetParam: obj{"metadata": obj{"ignored": true}},
		zeroHistoryAll:  true,
		foreignUser:     "ROLE_USER",
		pushKey:         "pushNotificationConfig",
		badSends: []badSend{
			{"no kind", func(_, m obj) { delete(m, "kind") }, "message.kind"},
			{"1.0 part", parts(obj{"text": "hi"}), "message.parts[0].kind"},
			{"text part without text", parts(obj{"kind": "text"}), "message.parts[0].text"},
			{"file with bytes and uri", parts(obj{"kind": "file", "file": obj{"bytes": "AA==", "uri": "https://x"}}), "message.parts[0].file"},
			{"data not an object", parts(obj{"kind": "data", "data": []any{1}}), "must be a JSON object"},
			{"data missing", parts(obj{"kind": "data"}), "message.parts[0].data"},
			{"configuration without acceptedOutputModes", configuration(obj{"blocking": true}), "acceptedOutputModes"},
			{"1.0 configuration", configuration(obj{"returnImmediately": true}), "acceptedOutputModes"},
		},
		required: []badCall{
			{"tasks/get", obj{}, "parameters: id: required"},
			{"tasks/cancel", obj{}, "parameters: id: required"},
			{"tasks/resubscribe", obj{}, "parameters: id: required"},
			{"tasks/pushNotificationConfig/set", obj{"pushNotificationConfig": obj{"url": "https://x"}}, "parameters: taskId: required"},
			{"tasks/pushNotificationConfig/get", obj{}, "parameters: id: required"},
			{"tasks/pushNotificationConfig/list", obj{}, "parameters: id: required"},
			{"tasks/pushNotificationConfig/delete", obj{"pushNotificationConfigId": "c"}, "parameters: id: required"},
			{"tasks/pushNotificationConfig/delete", obj{"id": "t"}, "parameters: pushNotificationConfigId: required"},
		},
	},
	{
		name:       "1.0",
		new:        func(o agentcore.Options) agenttest.Agent { return agent10.New(o) },
		Wire:       agenttest.Wire{Version: "1.0", OneKey: true},
		send:       "SendMessage",
		stream:     "SendStreamingMessage",
		get:        "GetTask",
		cancel:     "CancelTask",
		subscribe:  "SubscribeToTask",
		foreign:    "message/send",
		cardPath:   "/.well-known/agent-card.json",
		otherPaths: []string{"/.well-known/agent.json", "/agent/authenticatedExtendedCard"},
		cardURL:    func(t *testing.T, card obj) string { return agenttest.Str(t, card, "supportedInterfaces", 0, "url") },
		card: func(url string) obj {
			return obj{
				"name":                agent10.DefaultName,
				"supportedInterfaces": []any{obj{"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}},
				"capabilities":        obj{"streaming": true, "pushNotifications": true, "extendedAgentCard": true},
				"defaultInputModes":   []any{"text/plain", "application/json", "application/octet-stream"},
			}
		},
		cardRequired: []string{"description", "version", "defaultOutputModes", "provider"}, // REQUIRED in the proto
		cardForeign:  []string{"protocolVersion", "url", "preferredTransport", "supportsAuthenticatedExtendedCard", "additionalInterfaces"},
		states: map[string]string{
			"submitted": "TASK_STATE_SUBMITTED", "working": "TASK_STATE_WORKING", "input-required": "TASK_STATE_INPUT_REQUIRED",
			"completed": "TASK_STATE_COMPLETED", "canceled": "TASK_STATE_CANCELED", "failed": "TASK_STATE_FAILED",
		},
		user: "ROLE_USER", agent: "ROLE_AGENT",
		stepStamps: []string{
			"2000-01-01T00:00:00.000Z",
			"2000-01-01T00:00:00.300Z",
			"2000-01-01T00:00:00.900Z",
		},
		userMessage: func(text string) obj {
			return obj{"messageId": "m-" + text, "role": "ROLE_USER", "parts": []any{obj{"text": text}}}
		},
		agentMessage: func(id any, text, contextID string) obj {
			return obj{"messageId": id, "role": "ROLE_AGENT", "parts": []any{obj{"text": text}}, "contextId": contextID}
		},
		reply: func(t *testing.T, res obj) obj {
			if len(res) != 1 {
				t.Fatalf("result = %v, want {\"message\": ...} alone", res)
			}
			return agenttest.Path(t, res, "message").(obj)
		},
		sendNow:  func(msg obj) obj { return obj{"message": msg, "configuration": obj{"returnImmediately": true}} },
		config:   func() obj { return obj{} },
		textPart: func(text string) obj { return obj{"text": text} },
		echoParts: []any{
			obj{"raw": "aGVsbG8=", "mediaType": "text/plain", "filename": "a.txt"},
			obj{"url": "https://example.com/y.pdf", "mediaType": "application/pdf", "metadata": obj{"m": 1}},
			obj{"data": obj{"k": []any{1, "two", nil}, "big": json.Number("12345678901234567890")}},
			obj{"data": []any{1, 2}, "mediaType": "application/json"},
			obj{"data": nil},
		},
		task: func(t *testing.T, res obj) obj {
			if len(res) != 1 {
				t.Fatalf("result = %v, want {\"task\": ...} alone", res)
			}
			task := agenttest.Path(t, res, "task").(obj)
			if _, ok := task["kind"]; ok {
				t.Fatal("1.0 task has a kind")
			}
			return task
		},
		event: func(t *testing.T, ev obj) (string, obj) {
			for key, inner := range ev {
				kind := map[string]string{"statusUpdate": "status", "artifactUpdate": "artifact", "task": "task", "message": "message"}[key]
				return kind, inner.(obj)
			}
			t.Fatalf("empty stream event")
			return "", nil
		},
		notAccepting: -32004, // UnsupportedOperationError
		detail:       func(t *testing.T, e obj) any { return agenttest.Path(t, e, "data", 0, "metadata") },
		reasons: map[int]string{
			agentcore.CodeInvalidParams:     "INVALID_PARAMS",
			agentcore.CodeTaskNotFound:      "TASK_NOT_FOUND",
			agentcore.CodeTaskNotCancelable: "TASK_NOT_CANCELABLE",
			-32004:                          "UNSUPPORTED_OPERATION",
		},
		ignoredGetParam: obj{"tenant": "t"},
		foreignUser:     "user",
		pushKey:         "taskPushNotificationConfig",
		badSends: []badSend{
			{"numeric role", func(_, m obj) { m["role"] = 1 }, "message.role"},
			{"empty part", parts(obj{"mediaType": "text/plain"}), "message.parts[0]"},
			{"two contents", parts(obj{"text": "a", "url": "https://x"}), "message.parts[0]"},
			{"metadata not an object", func(_, m obj) { m["metadata"] = "x" }, "must be a JSON object"},
			{"push auth without scheme", configuration(obj{
				"taskPushNotificationConfig": obj{"url": "https://x", "authentication": obj{"credentials": "c"}},
			}), "authentication.scheme"},
		},
		terminalSubscribe: -32004, // UnsupportedOperationError
		required: []badCall{
			{"GetTask", obj{}, "parameters: id: required"},
			{"CancelTask", obj{}, "parameters: id: required"},
			{"SubscribeToTask", obj{}, "parameters: id: required"},
			{"CreateTaskPushNotificationConfig", obj{"url": "https://x"}, "parameters: taskId: required"},
			{"GetTaskPushNotificationConfig", obj{"id": "c"}, "parameters: taskId: required"},
			{"GetTaskPushNotificationConfig", obj{"taskId": "t"}, "parameters: id: required"},
			{"ListTaskPushNotificationConfigs", obj{}, "parameters: taskId: required"},
			{"DeleteTaskPushNotificationConfig", obj{"id": "c"}, "parameters: taskId: required"},
			{"DeleteTaskPushNotificationConfig", obj{"taskId": "t"}, "parameters: id: required"},
		},
	},
}

// forEach runs test as a parallel subtest per dialect, and t in parallel
// with the package's other tests: each subtest starts agents of its own.
func forEach(t *testing.T, test func(t *testing.T, d dialect)) {
	t.Parallel()
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			test(t, d)
		})
	}
}

// forEachAgent runs test as forEach does, against the dialect's agent with
// default options.
func forEachAgent(t *testing.T, test func(t *testing.T, d dialect, srv *httptest.Server)) {
	forEach(t, func(t *testing.T, d dialect) {
		_, srv := d.start(t, agentcore.Options{})
		test(t, d, srv)
	})
}

func (d dialect) start(t *testing.T, opts agentcore.Options) (agenttest.Agent, *httptest.Server) {
	t.Helper()
	a := d.new(opts)
	return a, agenttest.Start(t, a)
}

func (d dialect) sendText(text string) obj { return obj{"message": d.userMessage(text)} }

// next returns the next stream event, which must be of kind, unwrapped.
func (d dialect) next(t *testing.T, s *agenttest.SSE, kind string) obj {
	t.Helper()
	ev := s.MustNext()
	got, inner := d.event(t, ev)
	if got != kind {
		t.Fatalf("event = %v, want a %s event", ev, kind)
	}
	return inner
}

// wantFinal checks a status update's final flag, or its absence in 1.0.
func (d dialect) wantFinal(t *testing.T, update obj, final bool) {
	t.Helper()
	got, has := update["final"]
	if d.finalFlag && got != final || !d.finalFlag && has {
		t.Fatalf("status update %v: final = %v, want %v", update, got, map[bool]any{true: final, false: "none"}[d.finalFlag])
	}
}

// wantState fails unless o, a task or a status update, has the status
// state (a neutral name, a key of d.states); what names o.
func (d dialect) wantState(t *testing.T, what string, o obj, state string) {
	t.Helper()
	if got := agenttest.Str(t, o, "status", "state"); got != d.states[state] {
		t.Fatalf("%s: state %q, want %q", what, got, d.states[state])
	}
}

// nextStatus returns the next stream event, which must be a status update
// to state with the final flag final (see wantFinal).
func (d dialect) nextStatus(t *testing.T, s *agenttest.SSE, state string, final bool) obj {
	t.Helper()
	update := d.next(t, s, "status")
	d.wantState(t, "status update", update, state)
	d.wantFinal(t, update, final)
	return update
}

// wantCode checks an error's code and, in 1.0, that its data is one
// ErrorInfo with the code's reason.
func (d dialect) wantCode(t *testing.T, e obj, code int) {
	t.Helper()
	agenttest.WantCode(t, e, code)
	if d.reasons == nil {
		return
	}
	data, ok := e["data"].([]any)
	if !ok || len(data) != 1 {
		t.Fatalf("error data = %v, want an array of one ErrorInfo", e["data"])
	}
	info, _ := data[0].(obj)
	if info["@type"] != "type.googleapis.com/google.rpc.ErrorInfo" || info["domain"] != "a2a-protocol.org" || info["reason"] != d.reasons[code] {
		t.Fatalf("ErrorInfo = %v, want reason %s", info, d.reasons[code])
	}
}
