package rest

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/a2agate/gateway/dialect"
)

// operation is one REST operation: the 1.0 JSON-RPC method it becomes, where
// its fields come from, and how it answers.
type operation struct {
	method string
	// body: the request body is the ProtoJSON of the request message.
	body bool
	// stream: the answer is an event stream.
	stream bool
	// idField and configField name the params fields the path's {id} and
	// {configId} fill.
	idField, configField string
	query                []queryField
	// v03: the 0.3 binding's twin of a 1.0 operation, whose bodies are the
	// 0.3 proto's ProtoJSON.
	v03 bool
}

var (
	opSend      = &operation{method: "SendMessage", body: true}
	opStream    = &operation{method: "SendStreamingMessage", body: true, stream: true}
	opGetTask   = &operation{method: "GetTask", idField: "id", query: []queryField{qHistoryLength, qTenant}}
	opListTasks = &operation{method: "ListTasks", query: listTasksQuery}
	opCancel    = &operation{method: "CancelTask", body: true, idField: "id"}
	opSubscribe = &operation{method: "SubscribeToTask", stream: true, idField: "id", query: []queryField{qTenant}}
	// The spec prose's POST subscribe has a body: the SubscribeToTaskRequest.
	opSubscribePost = &operation{method: "SubscribeToTask", body: true, stream: true, idField: "id"}
	opCreatePush    = &operation{method: "CreateTaskPushNotificationConfig", body: true, idField: "taskId"}
	opListPush      = &operation{method: "ListTaskPushNotificationConfigs", idField: "taskId", query: []queryField{qPageSize, qPageToken, qTenant}}
	opGetPush       = &operation{method: "GetTaskPushNotificationConfig", idField: "taskId", configField: "id", query: []queryField{qTenant}}
	opDeletePush    = &operation{method: "DeleteTaskPushNotificationConfig", idField: "taskId", configField: "id", query: []queryField{qTenant}}
	opCard          = &operation{method: "GetExtendedAgentCard", query: []queryField{qTenant}}
)

// v03Twins are the operations of the 0.3 binding (/v1/…, a2a-v0.3.0.proto):
// the 1.0 ones without tenant and ListTasks. The extended card is GET
// /v1/card (the 0.3 SDKs' REST clients and servers read it so).
var v03Twins = map[*operation]*operation{
	opSend:          {method: "SendMessage", body: true, v03: true},
	opStream:        {method: "SendStreamingMessage", body: true, stream: true, v03: true},
	opGetTask:       {method: "GetTask", idField: "id", query: []queryField{qHistoryLengthV03}, v03: true},
	opCancel:        {method: "CancelTask", body: true, idField: "id", v03: true},
	opSubscribe:     {method: "SubscribeToTask", stream: true, idField: "id", v03: true},
	opSubscribePost: {method: "SubscribeToTask", body: true, stream: true, idField: "id", v03: true},
	opCreatePush:    {method: "CreateTaskPushNotificationConfig", body: true, idField: "taskId", query: []queryField{qConfigIDV03}, v03: true},
	opListPush:      {method: "ListTaskPushNotificationConfigs", idField: "taskId", query: []queryField{qPageSize, qPageToken}, v03: true},
	opGetPush:       {method: "GetTaskPushNotificationConfig", idField: "taskId", configField: "id", v03: true},
	opDeletePush:    {method: "DeleteTaskPushNotificationConfig", idField: "taskId", configField: "id", v03: true},
	opCard:          {method: "GetExtendedAgentCard", v03: true},
}

// routes are the routes without a tenant as ServeMux patterns, relative to
// the agent's path, with no method: the handler answers a wrong verb itself.
var routes = []string{
	"/message:send", "/message:stream", "/extendedAgentCard", "/tasks", "/tasks/{id}",
	"/tasks/{id}/pushNotificationConfigs", "/tasks/{id}/pushNotificationConfigs/{configId}",
	"/v1/message:send", "/v1/message:stream", "/v1/card", "/v1/tasks/{id}",
	"/v1/tasks/{id}/pushNotificationConfigs", "/v1/tasks/{id}/pushNotificationConfigs/{configId}",
}

// Routes returns the ServeMux patterns of the routes without a tenant,
// relative to the agent's path. Registered beside the agent's subtree, for
// the same handler, they are matched exactly: a subtree match costs the mux
// a second lookup (for a trailing-slash redirect) and allocations. The
// handler parses every path itself, whichever pattern matched it.
func Routes() []string { return slices.Clone(routes) }

// route is a matched REST request.
type route struct {
	op                   *operation
	tenant, id, configID string
	// colonID: the id holds a ':' that names no verb this binding has,
	// which only GET /tasks/{id} can take.
	colonID bool
}

// verbs maps the HTTP methods one path accepts to their operations.
type verbs map[string]*operation

// The 1.0 routes' verbs, by route shape; read only.
var (
	verbsSend        = verbs{"POST": opSend}
	verbsStream      = verbs{"POST": opStream}
	verbsCard        = verbs{"GET": opCard}
	verbsListTasks   = verbs{"GET": opListTasks}
	verbsGetTask     = verbs{"GET": opGetTask}
	verbsCancel      = verbs{"POST": opCancel}
	verbsSubscribe   = verbs{"GET": opSubscribe, "POST": opSubscribePost} // the proto says GET, the spec prose POST (A2A#1574): both
	verbsPushConfigs = verbs{"POST": opCreatePush, "GET": opListPush}
	verbsPushConfig  = verbs{"GET": opGetPush, "DELETE": opDeletePush}
)

func (v verbs) allow() string {
	var m []string
	for k := range v {
		m = append(m, k)
	}
	if v.head() != nil {
		m = append(m, http.MethodHead)
	}
	slices.Sort(m)
	return strings.Join(m, ", ")
}

// parseRoute matches a request path, relative to the agent's path and still
// percent-encoded, against the 1.0 routes (proto google.api.http annotations),
// each also under a /{tenant} prefix. Each segment is decoded once; a
// decoded id must be non-empty and hold no "/".
func parseRoute(verb, escapedPath string) (route, *apiError) {
	rest, ok := strings.CutPrefix(escapedPath, "/")
	if !ok || rest == "" {
		// "" is the agent's own path, spelt without its trailing slash.
		return route{}, unknownRoute("/" + rest)
	}
	segs := strings.Split(rest, "/")
	if segs[0] == "v1" && len(segs) > 1 {
		return parseV03Route(verb, escapedPath, segs[1:])
	}
	r, vs, err := matchSegments(segs)
	if err == nil && vs == nil && len(segs) > 1 {
		var tenant string
		if tenant, err = decodeSegment(segs[0], "tenant"); err == nil {
			r, vs, err = matchSegments(segs[1:])
			r.tenant = tenant
		}
	}
	if err != nil {
		return route{}, err
	}
	if vs == nil || (r.colonID && verb != "GET") {
		return route{}, unknownRoute(escapedPath)
	}
	return pickVerb(r, vs, verb)
}

// parseV03Route matches the segments after /v1 against the 0.3 routes. A
// tenant named "v1" is thereby out of reach of the 1.0 routes.
func parseV03Route(verb, escapedPath string, segs []string) (route, *apiError) {
	if len(segs) == 3 && segs[0] == "task" && segs[2] == "pushNotificationConfigs" && verb == "POST" {
		segs = append([]string{"tasks"}, segs[1:]...) // the 0.3 proto's create annotation says "task/*"
	}
	r, vs, err := matchSegments(segs)
	switch {
	case err != nil:
		return route{}, err
	case len(segs) == 1 && segs[0] == "card":
		vs = verbsCard
	case len(segs) == 1 && segs[0] == "extendedAgentCard":
		vs = nil // 1.0's name
	}
	twins := verbs{}
	for v, op := range vs {
		if t, ok := v03Twins[op]; ok {
			twins[v] = t
		}
	}
	if len(twins) == 0 || (r.colonID && verb != "GET") {
		return route{}, unknownRoute(escapedPath)
	}
	return pickVerb(r, twins, verb)
}

// head is the operation a HEAD is served as: the GET, whose answer
// net/http sends without its body (RFC 9110 §9.3.2). Not a stream's: a HEAD
// would hold a subscription open on the backend with nothing to show for it.
func (v verbs) head() *operation {
	if op := v[http.MethodGet]; op != nil && !op.stream {
		return op
	}
	return nil
}

func pickVerb(r route, vs verbs, verb string) (route, *apiError) {
	op, ok := vs[verb]
	if !ok && verb == http.MethodHead {
		op = vs.head()
		ok = op != nil
	}
	if !ok {
		why := ""
		if verb == http.MethodHead && vs[http.MethodGet] != nil {
			why = ": a HEAD would open a subscription to show nothing of it"
		}
		e := newError(http.StatusMethodNotAllowed, dialect.ErrMethodNotFound, "this route accepts "+vs.allow()+", not "+verb+why)
		e.status = "UNIMPLEMENTED"
		e.allow = vs.allow()
		return route{}, e
	}
	r.op = op
	return r, nil
}

func unknownRoute(p string) *apiError {
	e := newError(http.StatusNotFound, dialect.ErrMethodNotFound, "no A2A HTTP+JSON route at "+truncate(p, 128))
	e.status = "NOT_FOUND"
	return e
}

// RouteSegment reports whether seg, a path segment just below an agent's
// path, begins one of the binding's routes rather than naming a tenant:
// another agent published there would take those routes from it.
func RouteSegment(seg string) bool {
	_, vs, _ := matchSegments([]string{seg})
	return vs != nil || seg == "v1" || seg == "tasks"
}

// matchSegments matches the segments after the tenant. A nil verbs and nil
// error means no route has this shape.
func matchSegments(segs []string) (route, verbs, *apiError) {
	var r route
	var err *apiError
	switch {
	case len(segs) == 1 && segs[0] == "message:send":
		return r, verbsSend, nil
	case len(segs) == 1 && segs[0] == "message:stream":
		return r, verbsStream, nil
	case len(segs) == 1 && segs[0] == "extendedAgentCard":
		return r, verbsCard, nil
	case len(segs) == 1 && segs[0] == "tasks":
		return r, verbsListTasks, nil
	case len(segs) == 0 || segs[0] != "tasks":
		return r, nil, nil
	}
	// /tasks/{id}…; the custom verb is split off the still-encoded
	// segment, so an id may hold a ':' sent as %3A.
	raw, custom, hasCustom := segs[1], "", false
	if len(segs) == 2 {
		if i := strings.LastIndexByte(raw, ':'); i >= 0 {
			raw, custom, hasCustom = raw[:i], raw[i+1:], true
		}
		if hasCustom && custom != "cancel" && custom != "subscribe" {
			// No verb of the binding: the ':' is the id's, as clients
			// that do not escape it (a2a-go) send GET /tasks/a:b.
			raw, custom, hasCustom, r.colonID = segs[1], "", false, true
		}
	}
	if r.id, err = decodeSegment(raw, "task id"); err != nil {
		return r, nil, err
	}
	switch {
	case len(segs) == 2 && !hasCustom:
		return r, verbsGetTask, nil
	case len(segs) == 2 && custom == "cancel":
		return r, verbsCancel, nil
	case len(segs) == 2 && custom == "subscribe":
		return r, verbsSubscribe, nil
	case len(segs) == 3 && segs[2] == "pushNotificationConfigs":
		return r, verbsPushConfigs, nil
	case len(segs) == 4 && segs[2] == "pushNotificationConfigs":
		if r.configID, err = decodeSegment(segs[3], "push notification config id"); err != nil {
			return r, nil, err
		}
		return r, verbsPushConfig, nil
	}
	return r, nil, nil
}

// decodeSegment percent-decodes one path segment.
func decodeSegment(s, what string) (string, *apiError) {
	v, err := url.PathUnescape(s)
	switch {
	case err != nil:
		return "", newError(http.StatusBadRequest, dialect.ErrInvalidParams, "the "+what+" in the path is not validly percent-encoded")
	case v == "":
		return "", newError(http.StatusBadRequest, dialect.ErrInvalidParams, "the "+what+" in the path is empty")
	case strings.ContainsRune(v, '/'):
		return "", newError(http.StatusBadRequest, dialect.ErrInvalidParams, "the "+what+" in the path holds a \"/\"")
	case !utf8.ValidString(v):
		// JSON strings are UTF-8: the id could not be passed on unchanged.
		return "", newError(http.StatusBadRequest, dialect.ErrInvalidParams, "the "+what+" in the path is not valid UTF-8")
	}
	return v, nil
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
