package normalize

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/sse"
)

// The benchmarks translate the two payloads that dominate gateway traffic,
// a send request and a task result, in each direction, beside a baseline
// that does the same the usual way: decode into SDK-like Go structs with
// encoding/json, convert, encode the other dialect. Both sides do the
// whole job the proxy does for one message (envelope included), so the
// ratio is what choosing byte-level translation buys.
//
//	go test -run='^$' -bench='Request|TaskResult' -benchmem ./normalize

// benchSendV03 is a typical 0.x send request: three parts, metadata, a push
// config, about 1 KB.
var benchSendV03 = []byte(`{"jsonrpc":"2.0","id":"9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d","method":"message/send","params":{` +
	`"message":{"kind":"message","messageId":"6ba7b810-9dad-11d1-80b4-00c04fd430c8","role":"user",` +
	`"contextId":"ctx-7f3c2a","taskId":"task-51e0b8","metadata":{"skillId":"summarize","locale":"en-GB"},"parts":[` +
	`{"kind":"text","text":"` + strings.Repeat("Please summarise the attached quarterly report. ", 8) + `"},` +
	`{"kind":"file","file":{"uri":"https://files.example.com/reports/2025-q3.pdf","mimeType":"application/pdf","name":"2025-q3.pdf"}},` +
	`{"kind":"data","data":{"format":"bullets","maxWords":200,"sections":["revenue","costs","outlook"],"audience":{"role":"board","expertise":"high"}}}]},` +
	`"configuration":{"acceptedOutputModes":["text/plain","text/markdown"],"blocking":true,"historyLength":10,` +
	`"pushNotificationConfig":{"url":"https://client.example.com/a2a/webhook","token":"tok-8c1f","authentication":{"schemes":["Bearer"],"credentials":"cred-0a9d"}}},` +
	`"metadata":{"traceId":"4bf92f3577b34da6a3ce929d0e0e4736","client":"example-app/2.3"}}}`)

// benchTaskV03 is a typical 0.x task result: ten history messages, two
// artifacts, about 8 KB.
var benchTaskV03 = func() []byte {
	var b strings.Builder
	b.WriteString(`{"jsonrpc":"2.0","id":"9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d","result":{"kind":"task","id":"task-51e0b8","contextId":"ctx-7f3c2a",`)
	b.WriteString(`"status":{"state":"completed","timestamp":"2025-07-31T12:00:00.123456+00:00",` +
		`"message":{"kind":"message","messageId":"st-1","role":"agent","parts":[{"kind":"text","text":"Done."}]}},"history":[`)
	for i := range 10 {
		role := "user"
		if i%2 == 1 {
			role = "agent"
		}
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"kind":"message","messageId":"msg-%04d","role":%q,"contextId":"ctx-7f3c2a","taskId":"task-51e0b8",`+
			`"metadata":{"seq":%d},"parts":[{"kind":"text","text":%q},{"kind":"data","data":{"step":%d,"tokens":%d,"tool":"search"}}]}`,
			i, role, i, strings.Repeat(fmt.Sprintf("Turn %d of the conversation about the quarterly report. ", i), 7), i, 100*i+17)
	}
	b.WriteString(`],"artifacts":[`)
	b.WriteString(`{"artifactId":"art-summary","name":"summary","description":"Board summary","parts":[{"kind":"text","text":` +
		fmt.Sprintf("%q", strings.Repeat("Revenue grew while costs stayed flat. ", 20)) + `}],"metadata":{"words":180}},`)
	b.WriteString(`{"artifactId":"art-chart","name":"chart","parts":[{"kind":"file","file":{"bytes":"` + strings.Repeat("iVBORw0KGgoAAAANSUhEUgAA", 30) +
		`","mimeType":"image/png","name":"chart.png"}},{"kind":"data","data":{"series":[1,2,3,5,8,13,21],"unit":"MEUR"}}]}`)
	b.WriteString(`],"metadata":{"owner":"user-42","costCents":1375}}}`)
	return []byte(b.String())
}()

// benchEnvelope translates a whole JSON-RPC request as the proxy does.
func benchRequest(b *testing.B, to dialect.ID, body []byte, dst []byte) []byte {
	env, err := ParseRequest(body)
	if err != nil {
		b.Fatal(err)
	}
	params, _, err := AppendParams(nil, &env, to)
	if err != nil {
		b.Fatal(err)
	}
	method, _ := dialect.MethodName(to, env.Op)
	dst = append(dst[:0], `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, env.ID...)
	dst = append(dst, `,"method":"`...)
	dst = append(dst, method...)
	dst = append(dst, `","params":`...)
	dst = append(dst, params...)
	return append(dst, '}')
}

// benchReply translates a whole JSON-RPC reply as the proxy does.
func benchReply(b *testing.B, from, to dialect.ID, body []byte, dst []byte) []byte {
	reply, err := ParseReply(body)
	if err != nil {
		b.Fatal(err)
	}
	result, _, err := AppendResult(nil, dialect.GetTask, from, to, &reply)
	if err != nil {
		b.Fatal(err)
	}
	return AppendResultResponse(dst[:0], reply.ID, result)
}

func mustTranslate(body []byte, translate func([]byte) ([]byte, error)) []byte {
	out, err := translate(body)
	if err != nil {
		panic(err)
	}
	return out
}

var (
	benchSendV10 = mustTranslate(benchSendV03, func(body []byte) ([]byte, error) {
		env, err := ParseRequest(body)
		if err != nil {
			return nil, err
		}
		params, _, err := Params(env.Op, dialect.V03, dialect.V10, env.Params)
		return []byte(`{"jsonrpc":"2.0","id":` + string(env.ID) + `,"method":"SendMessage","params":` + string(params) + `}`), err
	})
	benchTaskV10 = mustTranslate(benchTaskV03, func(body []byte) ([]byte, error) {
		reply, err := ParseReply(body)
		if err != nil {
			return nil, err
		}
		result, err := Result(dialect.GetTask, dialect.V03, dialect.V10, reply.Result)
		return AppendResultResponse(nil, reply.ID, result), err
	})
)

type benchCase struct {
	name     string
	from, to dialect.ID
	in       []byte
}

func benchCases(v03, v10 []byte) []benchCase {
	return []benchCase{
		{"0.x-to-1.0", dialect.V03, dialect.V10, v03},
		{"1.0-to-0.x", dialect.V10, dialect.V03, v10},
		{"1.0-to-1.0", dialect.V10, dialect.V10, v10},
	}
}

// runCases runs bench as a sub-benchmark per case, reporting allocations
// and the case's input size.
func runCases(b *testing.B, cases []benchCase, bench func(b *testing.B, bc benchCase)) {
	for _, bc := range cases {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.in)))
			bench(b, bc)
		})
	}
}

func BenchmarkRequest(b *testing.B) {
	runCases(b, benchCases(benchSendV03, benchSendV10), func(b *testing.B, bc benchCase) {
		dst := make([]byte, 0, 2*len(bc.in))
		for b.Loop() {
			dst = benchRequest(b, bc.to, bc.in, dst)
		}
	})
}

func BenchmarkRequest_encodingJSON(b *testing.B) {
	runCases(b, benchCases(benchSendV03, benchSendV10), func(b *testing.B, bc benchCase) {
		for b.Loop() {
			if _, err := stdTranslateRequest(bc.from, bc.to, bc.in); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkTaskResult(b *testing.B) {
	runCases(b, benchCases(benchTaskV03, benchTaskV10), func(b *testing.B, bc benchCase) {
		dst := make([]byte, 0, 2*len(bc.in))
		for b.Loop() {
			dst = benchReply(b, bc.from, bc.to, bc.in, dst)
		}
	})
}

func BenchmarkTaskResult_encodingJSON(b *testing.B) {
	runCases(b, benchCases(benchTaskV03, benchTaskV10), func(b *testing.B, bc benchCase) {
		for b.Loop() {
			if _, err := stdTranslateReply(bc.from, bc.to, bc.in); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestBenchmarkBaselineAgrees keeps the baseline honest: it must produce
// what the gateway produces, or the comparison measures different work.
func TestBenchmarkBaselineAgrees(t *testing.T) {
	t.Parallel()
	if n := len(benchSendV03); n < 900 || n > 1400 {
		t.Errorf("send request is %d bytes, want about 1 KB", n)
	}
	if n := len(benchTaskV03); n < 7000 || n > 9500 {
		t.Errorf("task result is %d bytes, want about 8 KB", n)
	}
	for _, bc := range benchCases(benchSendV03, benchSendV10) {
		got, err := stdTranslateRequest(bc.from, bc.to, bc.in)
		if err != nil {
			t.Fatal(err)
		}
		env, _ := ParseRequest(bc.in)
		params, _, err := Params(env.Op, bc.from, bc.to, env.Params)
		if err != nil {
			t.Fatal(err)
		}
		var std stdEnvelope
		if err := json.Unmarshal(got, &std); err != nil || !jsonEqual(std.Params, params) {
			t.Errorf("request %s: baseline and gateway disagree (%v)\nstd:     %s\ngateway: %s", bc.name, err, std.Params, params)
		}
	}
	for _, bc := range benchCases(benchTaskV03, benchTaskV10) {
		got, err := stdTranslateReply(bc.from, bc.to, bc.in)
		if err != nil {
			t.Fatal(err)
		}
		reply, _ := ParseReply(bc.in)
		result, err := Result(dialect.GetTask, bc.from, bc.to, reply.Result)
		if err != nil {
			t.Fatal(err)
		}
		if want := AppendResultResponse(nil, reply.ID, result); !jsonEqual(got, want) {
			t.Errorf("task %s: baseline and gateway disagree\nstd:     %s\ngateway: %s", bc.name, got, want)
		}
	}
	id := []byte(`"caller-7"`)
	for _, bc := range benchEventCases(t) {
		got, err := stdTranslateEvent(bc.from, bc.to, id, bc.in)
		if err != nil {
			t.Fatal(err)
		}
		reply, _ := ParseReply(bc.in)
		result, err := Event(bc.from, bc.to, reply.Result, false)
		if err != nil {
			t.Fatal(err)
		}
		if want := AppendResultResponse(nil, id, result); !jsonEqual(got, want) {
			t.Errorf("event %s: baseline and gateway disagree\nstd:     %s\ngateway: %s", bc.name, got, want)
		}
	}
}

// The baseline's model: Go structs shaped like the SDKs' (a2a-go, a2a-python
// via pydantic), free-form members as map[string]any. What the two dialects
// spell alike but for the types inside (the JSON-RPC envelopes, a status,
// an artifact) is one generic struct, which encoding/json handles as it
// does the SDKs' own.

type (
	// rpcRequest is a JSON-RPC request with params P.
	rpcRequest[P any] struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
		Params  P               `json:"params"`
	}
	// rpcReply is a JSON-RPC response with result R.
	rpcReply[R any] struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  R               `json:"result"`
	}
	// taskStatus is a TaskStatus with messages M.
	taskStatus[M any] struct {
		State     string `json:"state"`
		Message   *M     `json:"message,omitempty"`
		Timestamp string `json:"timestamp,omitempty"`
	}
	// artifact is an Artifact with parts P.
	artifact[P any] struct {
		ArtifactID  string         `json:"artifactId"`
		Name        string         `json:"name,omitempty"`
		Description string         `json:"description,omitempty"`
		Parts       []P            `json:"parts"`
		Metadata    map[string]any `json:"metadata,omitempty"`
		Extensions  []string       `json:"extensions,omitempty"`
	}
)

type (
	v03Request    = rpcRequest[v03SendParams]
	v03Reply      = rpcReply[v03Task]
	v03Status     = taskStatus[v03Message]
	v03Artifact   = artifact[v03Part]
	v03SendParams struct {
		Message       v03Message     `json:"message"`
		Configuration *v03SendConfig `json:"configuration,omitempty"`
		Metadata      map[string]any `json:"metadata,omitempty"`
	}
	v03SendConfig struct {
		AcceptedOutputModes    []string       `json:"acceptedOutputModes"`
		Blocking               *bool          `json:"blocking,omitempty"`
		HistoryLength          *int           `json:"historyLength,omitempty"`
		PushNotificationConfig *v03PushConfig `json:"pushNotificationConfig,omitempty"`
	}
	v03PushConfig struct {
		ID             string   `json:"id,omitempty"`
		URL            string   `json:"url"`
		Token          string   `json:"token,omitempty"`
		Authentication *v03Auth `json:"authentication,omitempty"`
	}
	v03Auth struct {
		Schemes     []string `json:"schemes"`
		Credentials string   `json:"credentials,omitempty"`
	}
	v03Message struct {
		Kind             string         `json:"kind"`
		MessageID        string         `json:"messageId"`
		Role             string         `json:"role"`
		Parts            []v03Part      `json:"parts"`
		ContextID        string         `json:"contextId,omitempty"`
		TaskID           string         `json:"taskId,omitempty"`
		ReferenceTaskIDs []string       `json:"referenceTaskIds,omitempty"`
		Extensions       []string       `json:"extensions,omitempty"`
		Metadata         map[string]any `json:"metadata,omitempty"`
	}
	v03Part struct {
		Kind     string         `json:"kind"`
		Text     string         `json:"text,omitempty"`
		File     *v03File       `json:"file,omitempty"`
		Data     map[string]any `json:"data,omitempty"`
		Metadata map[string]any `json:"metadata,omitempty"`
	}
	v03File struct {
		Bytes    string `json:"bytes,omitempty"`
		URI      string `json:"uri,omitempty"`
		MimeType string `json:"mimeType,omitempty"`
		Name     string `json:"name,omitempty"`
	}
	v03Task struct {
		Kind      string         `json:"kind"`
		ID        string         `json:"id"`
		ContextID string         `json:"contextId"`
		Status    v03Status      `json:"status"`
		Artifacts []v03Artifact  `json:"artifacts,omitempty"`
		History   []v03Message   `json:"history,omitempty"`
		Metadata  map[string]any `json:"metadata,omitempty"`
	}
)

type (
	v10Request    = rpcRequest[v10SendParams]
	v10Reply      = rpcReply[v10Task]
	v10Status     = taskStatus[v10Message]
	v10Artifact   = artifact[v10Part]
	v10SendParams struct {
		Tenant        string         `json:"tenant,omitempty"`
		Message       v10Message     `json:"message"`
		Configuration *v10SendConfig `json:"configuration,omitempty"`
		Metadata      map[string]any `json:"metadata,omitempty"`
	}
	v10SendConfig struct {
		AcceptedOutputModes        []string       `json:"acceptedOutputModes,omitempty"`
		HistoryLength              *int32         `json:"historyLength,omitempty"`
		ReturnImmediately          bool           `json:"returnImmediately,omitempty"`
		TaskPushNotificationConfig *v10PushConfig `json:"taskPushNotificationConfig,omitempty"`
	}
	v10PushConfig struct {
		Tenant         string   `json:"tenant,omitempty"`
		TaskID         string   `json:"taskId,omitempty"`
		ID             string   `json:"id,omitempty"`
		URL            string   `json:"url"`
		Token          string   `json:"token,omitempty"`
		Authentication *v10Auth `json:"authentication,omitempty"`
	}
	v10Auth struct {
		Scheme      string `json:"scheme"`
		Credentials string `json:"credentials,omitempty"`
	}
	v10Message struct {
		MessageID        string         `json:"messageId"`
		ContextID        string         `json:"contextId,omitempty"`
		TaskID           string         `json:"taskId,omitempty"`
		Role             string         `json:"role"`
		Parts            []v10Part      `json:"parts"`
		Metadata         map[string]any `json:"metadata,omitempty"`
		Extensions       []string       `json:"extensions,omitempty"`
		ReferenceTaskIDs []string       `json:"referenceTaskIds,omitempty"`
	}
	v10Part struct {
		Text      *string        `json:"text,omitempty"`
		Raw       string         `json:"raw,omitempty"`
		URL       string         `json:"url,omitempty"`
		Data      any            `json:"data,omitempty"`
		Metadata  map[string]any `json:"metadata,omitempty"`
		Filename  string         `json:"filename,omitempty"`
		MediaType string         `json:"mediaType,omitempty"`
	}
	v10Task struct {
		ID        string         `json:"id"`
		ContextID string         `json:"contextId,omitempty"`
		Status    v10Status      `json:"status"`
		Artifacts []v10Artifact  `json:"artifacts,omitempty"`
		History   []v10Message   `json:"history,omitempty"`
		Metadata  map[string]any `json:"metadata,omitempty"`
	}
)

func stdTranslateRequest(from, to dialect.ID, body []byte) ([]byte, error) {
	var req10 v10Request
	if from == dialect.V03 {
		var req v03Request
		if err := json.Unmarshal(body, &req); err != nil {
			return nil, err
		}
		if to == dialect.V03 {
			return json.Marshal(req)
		}
		req10 = v10Request{JSONRPC: "2.0", ID: req.ID, Method: "SendMessage", Params: sendParamsToV10(req.Params)}
		return json.Marshal(req10)
	}
	if err := json.Unmarshal(body, &req10); err != nil {
		return nil, err
	}
	if to == dialect.V10 {
		return json.Marshal(req10)
	}
	return json.Marshal(v03Request{JSONRPC: "2.0", ID: req10.ID, Method: "message/send", Params: sendParamsToV03(req10.Params)})
}

func stdTranslateReply(from, to dialect.ID, body []byte) ([]byte, error) {
	if from == dialect.V03 {
		var r v03Reply
		if err := json.Unmarshal(body, &r); err != nil {
			return nil, err
		}
		if to == dialect.V03 {
			return json.Marshal(r)
		}
		t, err := taskToV10(r.Result)
		if err != nil {
			return nil, err
		}
		return json.Marshal(v10Reply{JSONRPC: "2.0", ID: r.ID, Result: t})
	}
	var r v10Reply
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, err
	}
	if to == dialect.V10 {
		return json.Marshal(r)
	}
	return json.Marshal(v03Reply{JSONRPC: "2.0", ID: r.ID, Result: taskToV03(r.Result)})
}

func sendParamsToV10(p v03SendParams) v10SendParams {
	out := v10SendParams{Message: messageToV10(p.Message), Metadata: p.Metadata}
	if c := p.Configuration; c != nil {
		cfg := &v10SendConfig{AcceptedOutputModes: c.AcceptedOutputModes, ReturnImmediately: c.Blocking != nil && !*c.Blocking}
		if c.HistoryLength != nil && *c.HistoryLength > 0 {
			n := int32(*c.HistoryLength)
			cfg.HistoryLength = &n
		}
		if pc := c.PushNotificationConfig; pc != nil {
			cfg.TaskPushNotificationConfig = &v10PushConfig{ID: pc.ID, URL: pc.URL, Token: pc.Token}
			if a := pc.Authentication; a != nil && len(a.Schemes) > 0 {
				cfg.TaskPushNotificationConfig.Authentication = &v10Auth{Scheme: a.Schemes[0], Credentials: a.Credentials}
			}
		}
		out.Configuration = cfg
	}
	return out
}

func sendParamsToV03(p v10SendParams) v03SendParams {
	out := v03SendParams{Message: messageToV03(p.Message), Metadata: p.Metadata}
	blocking := true
	cfg := &v03SendConfig{AcceptedOutputModes: []string{}, Blocking: &blocking}
	if c := p.Configuration; c != nil {
		blocking = !c.ReturnImmediately
		if c.AcceptedOutputModes != nil {
			cfg.AcceptedOutputModes = c.AcceptedOutputModes
		}
		if c.HistoryLength != nil && *c.HistoryLength > 0 {
			n := int(*c.HistoryLength)
			cfg.HistoryLength = &n
		}
		if pc := c.TaskPushNotificationConfig; pc != nil {
			cfg.PushNotificationConfig = &v03PushConfig{ID: pc.ID, URL: pc.URL, Token: pc.Token}
			if a := pc.Authentication; a != nil {
				cfg.PushNotificationConfig.Authentication = &v03Auth{Schemes: []string{a.Scheme}, Credentials: a.Credentials}
			}
		}
	}
	out.Configuration = cfg
	return out
}

func messageToV10(m v03Message) v10Message {
	role, _ := dialect.ToV10(dialect.Roles, m.Role)
	return v10Message{MessageID: m.MessageID, ContextID: m.ContextID, TaskID: m.TaskID, Role: role, Parts: partsToV10(m.Parts),
		Metadata: m.Metadata, Extensions: m.Extensions, ReferenceTaskIDs: m.ReferenceTaskIDs}
}

func messageToV03(m v10Message) v03Message {
	role, ok := dialect.ToV03(dialect.Roles, m.Role)
	if !ok {
		role = "agent"
	}
	return v03Message{Kind: "message", MessageID: m.MessageID, ContextID: m.ContextID, TaskID: m.TaskID, Role: role, Parts: partsToV03(m.Parts),
		Metadata: m.Metadata, Extensions: m.Extensions, ReferenceTaskIDs: m.ReferenceTaskIDs}
}

func partsToV10(parts []v03Part) []v10Part {
	out := make([]v10Part, len(parts))
	for i, p := range parts {
		q := v10Part{Metadata: p.Metadata}
		switch p.Kind {
		case "text":
			text := p.Text
			q.Text = &text
		case "file":
			q.Raw, q.URL, q.MediaType, q.Filename = p.File.Bytes, p.File.URI, p.File.MimeType, p.File.Name
		case "data":
			q.Data = p.Data
			if wrapped, ok := p.Metadata[compatFlag].(bool); ok && wrapped && len(p.Data) == 1 {
				q.Data = p.Data["value"]
				delete(q.Metadata, compatFlag)
			}
		}
		out[i] = q
	}
	return out
}

func partsToV03(parts []v10Part) []v03Part {
	out := make([]v03Part, len(parts))
	for i, p := range parts {
		q := v03Part{Metadata: p.Metadata}
		switch {
		case p.Text != nil:
			q.Kind, q.Text = "text", *p.Text
		case p.Raw != "" || p.URL != "":
			q.Kind, q.File = "file", &v03File{Bytes: p.Raw, URI: p.URL, MimeType: p.MediaType, Name: p.Filename}
		default:
			q.Kind = "data"
			if obj, ok := p.Data.(map[string]any); ok {
				q.Data = obj
			} else {
				q.Data = map[string]any{"value": p.Data}
				if q.Metadata == nil {
					q.Metadata = map[string]any{}
				}
				q.Metadata[compatFlag] = true
			}
		}
		out[i] = q
	}
	return out
}

// convertArtifact is a with its parts converted by parts.
func convertArtifact[P, Q any](a artifact[P], parts func([]P) []Q) artifact[Q] {
	return artifact[Q]{ArtifactID: a.ArtifactID, Name: a.Name, Description: a.Description,
		Parts: parts(a.Parts), Metadata: a.Metadata, Extensions: a.Extensions}
}

func taskToV10(t v03Task) (v10Task, error) {
	state, _ := dialect.ToV10(dialect.TaskStates, t.Status.State)
	out := v10Task{ID: t.ID, ContextID: t.ContextID, Metadata: t.Metadata, Status: v10Status{State: state}}
	if t.Status.Message != nil {
		m := messageToV10(*t.Status.Message)
		out.Status.Message = &m
	}
	if ts := t.Status.Timestamp; ts != "" {
		parsed, err := parseISO8601(ts)
		if err != nil {
			return out, err
		}
		out.Status.Timestamp = parsed.UTC().Format("2006-01-02T15:04:05.999999999Z07:00")
	}
	for _, m := range t.History {
		out.History = append(out.History, messageToV10(m))
	}
	for _, a := range t.Artifacts {
		out.Artifacts = append(out.Artifacts, convertArtifact(a, partsToV10))
	}
	return out, nil
}

func taskToV03(t v10Task) v03Task {
	state, ok := dialect.ToV03(dialect.TaskStates, t.Status.State)
	if !ok {
		state = "unknown"
	}
	out := v03Task{Kind: "task", ID: t.ID, ContextID: t.ContextID, Metadata: t.Metadata,
		Status: v03Status{State: state, Timestamp: t.Status.Timestamp}}
	if t.Status.Message != nil {
		m := messageToV03(*t.Status.Message)
		out.Status.Message = &m
	}
	for _, m := range t.History {
		out.History = append(out.History, messageToV03(m))
	}
	for _, a := range t.Artifacts {
		out.Artifacts = append(out.Artifacts, convertArtifact(a, partsToV03))
	}
	return out
}

// BenchmarkStreamEvent is the translation work the gateway does for each
// stream event, as its relay does it: the backend's JSON-RPC response read,
// its result translated (reading its task id, state and final in the same
// walk) and wrapped in the caller's response and SSE framing. ns/op is per
// event.
//
//	go test -run '^$' -bench StreamEvent -benchmem ./normalize
func BenchmarkStreamEvent(b *testing.B) {
	runCases(b, benchEventCases(b), func(b *testing.B, bc benchCase) {
		var scratch, resp, frame []byte
		id := []byte(`"caller-7"`)
		for b.Loop() {
			reply, err := ParseReply(bc.in)
			if err != nil {
				b.Fatal(err)
			}
			out, _, err := AppendInspectedEvent(scratch[:0], bc.from, bc.to, &reply)
			if err != nil {
				b.Fatal(err)
			}
			if len(out) > 0 && &out[0] != &reply.Result[0] {
				scratch = out
			}
			resp = AppendResultResponse(resp[:0], id, out)
			frame = sse.AppendEvent(frame[:0], sse.Event{Data: resp})
		}
	})
}

// benchEventCases are a status and an artifact update, each for every
// caller/backend pair, named shape/pair.
func benchEventCases(tb testing.TB) []benchCase {
	var out []benchCase
	for _, shape := range []string{"status_update_working", "artifact_update_append"} {
		for _, bc := range benchCases(benchEventEnvelope(tb, shape+".v03.json"), benchEventEnvelope(tb, shape+".v10.json")) {
			bc.name = shape + "/" + bc.name
			out = append(out, bc)
		}
	}
	return out
}

// benchEventEnvelope is a golden event result as a backend sends it: in a
// JSON-RPC response, with the stamp the load benchmark's backend adds.
func benchEventEnvelope(tb testing.TB, name string) []byte {
	tb.Helper()
	result, err := os.ReadFile(filepath.Join("testdata", "event", name))
	if err != nil {
		tb.Fatal(err)
	}
	return []byte(`{"jsonrpc":"2.0","id":"gw-1f3a","result":` + strings.TrimSpace(string(result)) + `}`)
}

// BenchmarkStreamEvent_encodingJSON does BenchmarkStreamEvent's work with
// encoding/json and SDK-shaped structs.
func BenchmarkStreamEvent_encodingJSON(b *testing.B) {
	runCases(b, benchEventCases(b), func(b *testing.B, bc benchCase) {
		var frame []byte
		for b.Loop() {
			out, err := stdTranslateEvent(bc.from, bc.to, []byte(`"caller-7"`), bc.in)
			if err != nil {
				b.Fatal(err)
			}
			frame = sse.AppendEvent(frame[:0], sse.Event{Data: out})
		}
	})
}

type (
	v03Event struct {
		Kind      string         `json:"kind"`
		TaskID    string         `json:"taskId"`
		ContextID string         `json:"contextId"`
		Status    *v03Status     `json:"status,omitempty"`
		Artifact  *v03Artifact   `json:"artifact,omitempty"`
		Append    *bool          `json:"append,omitempty"`
		LastChunk *bool          `json:"lastChunk,omitempty"`
		Final     *bool          `json:"final,omitempty"`
		Metadata  map[string]any `json:"metadata,omitempty"`
	}
	v10Event struct {
		StatusUpdate   *v10Update `json:"statusUpdate,omitempty"`
		ArtifactUpdate *v10Update `json:"artifactUpdate,omitempty"`
	}
	v10Update struct {
		TaskID    string         `json:"taskId"`
		ContextID string         `json:"contextId"`
		Status    *v10Status     `json:"status,omitempty"`
		Artifact  *v10Artifact   `json:"artifact,omitempty"`
		Append    *bool          `json:"append,omitempty"`
		LastChunk *bool          `json:"lastChunk,omitempty"`
		Metadata  map[string]any `json:"metadata,omitempty"`
	}
)

// stdTranslateEvent translates a status or artifact update event, wrapped
// in its JSON-RPC response, into to's dialect, answering to id.
func stdTranslateEvent(from, to dialect.ID, id, body []byte) ([]byte, error) {
	var r rpcReply[json.RawMessage]
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, err
	}
	var u v10Update
	kind := "status-update"
	if from == dialect.V03 {
		var e v03Event
		if err := json.Unmarshal(r.Result, &e); err != nil {
			return nil, err
		}
		kind = e.Kind
		u = v10Update{TaskID: e.TaskID, ContextID: e.ContextID, Metadata: e.Metadata}
		if e.Status != nil {
			t, err := taskToV10(v03Task{Status: *e.Status})
			if err != nil {
				return nil, err
			}
			u.Status = &t.Status
		}
		if a := e.Artifact; a != nil {
			converted := convertArtifact(*a, partsToV10)
			u.Artifact = &converted
			u.Append, u.LastChunk = e.Append, e.LastChunk
		}
	} else {
		var e v10Event
		if err := json.Unmarshal(r.Result, &e); err != nil {
			return nil, err
		}
		if e.StatusUpdate != nil {
			u = *e.StatusUpdate
		} else if e.ArtifactUpdate != nil {
			u, kind = *e.ArtifactUpdate, "artifact-update"
		}
	}
	var result any
	switch {
	case to == dialect.V10 && kind == "status-update":
		result = v10Event{StatusUpdate: &u}
	case to == dialect.V10:
		result = v10Event{ArtifactUpdate: &u}
	default:
		e := v03Event{Kind: kind, TaskID: u.TaskID, ContextID: u.ContextID, Metadata: u.Metadata}
		if u.Status != nil {
			s := taskToV03(v10Task{Status: *u.Status}).Status
			e.Status, e.Final = &s, new(bool)
		}
		if a := u.Artifact; a != nil {
			converted := convertArtifact(*a, partsToV03)
			e.Artifact = &converted
			e.Append, e.LastChunk = u.Append, u.LastChunk
		}
		result = e
	}
	return json.Marshal(rpcReply[any]{"2.0", id, result})
}

// BenchmarkListedTaskStatus is what the ListTasks page reads of each task
// it lists (its state for the filter, its timestamp for the order), from a
// task whose status comes after ten history messages and two artifacts.
//
//	go test -run='^$' -bench=ListedTaskStatus -benchmem ./normalize
func BenchmarkListedTaskStatus(b *testing.B) {
	reply, err := ParseReply(benchTaskV10)
	if err != nil {
		b.Fatal(err)
	}
	got := gjson.ParseBytes(reply.Result)
	if got.Get("task").Exists() {
		got = got.Get("task")
	}
	// The status last: a member scan walks the whole task to reach it.
	task := []byte(`{"id":"t","history":` + got.Get("history").Raw + `,"artifacts":` + got.Get("artifacts").Raw + `,"status":{"state":"TASK_STATE_COMPLETED","timestamp":"2026-01-02T03:04:05Z"}}`)
	b.SetBytes(int64(len(task)))
	b.ReportAllocs()
	for b.Loop() {
		state, at := TaskStatus(task)
		if state != "TASK_STATE_COMPLETED" || at.IsZero() {
			b.Fatal(state, at)
		}
	}
}
