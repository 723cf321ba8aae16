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
}

var (
	opSend       = &operation{method: "SendMessage", body: true}
	opStream     = &operation{method: "SendStreamingMessage", body: true, stream: true}
	opGetTask    = &operation{method: "GetTask", idField: "id", query: []queryField{qHistoryLength}}
	opListTasks  = &operation{method: "ListTasks", query: listTasksQuery}
	opCancel     = &operation{method: "CancelTask", body: true, idField: "id"}
	opSubscribe  = &operation{method: "SubscribeToTask", stream: true, idField: "id"}
	opCreatePush = &operation{method: "CreateTaskPushNotificationConfig", body: true, idField: "taskId"}
	opListPush   = &operation{method: "ListTaskPushNotificationConfigs", idField: "taskId", query: []queryField{qPageSize, qPageToken}}
	opGetPush    = &operation{method: "GetTaskPushNotificationConfig", idField: "taskId", configField: "id"}
	opDeletePush = &operation{method: "DeleteTaskPushNotificationConfig", idField: "taskId", configField: "id"}
	opCard       = &operation{method: "GetExtendedAgentCard"}
)

// route is a matched REST request.
type route struct {
	op                   *operation
	tenant, id, configID string
}

// verbs maps the HTTP methods one path accepts to their operations.
type verbs map[string]*operation

func (v verbs) allow() string {
	var m []string
	for k := range v {
		m = append(m, k)
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
		return route{}, unknownRoute(escapedPath)
	}
	segs := strings.Split(rest, "/")
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
	if vs == nil {
		return route{}, unknownRoute(escapedPath)
	}
	op, ok := vs[verb]
	if !ok {
		e := newError(http.StatusMethodNotAllowed, dialect.ErrMethodNotFound, "this route accepts "+vs.allow()+", not "+verb)
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

// matchSegments matches the segments after the tenant. A nil verbs and nil
// error means no route has this shape.
func matchSegments(segs []string) (route, verbs, *apiError) {
	var r route
	var err *apiError
	switch {
	case len(segs) == 1 && segs[0] == "message:send":
		return r, verbs{"POST": opSend}, nil
	case len(segs) == 1 && segs[0] == "message:stream":
		return r, verbs{"POST": opStream}, nil
	case len(segs) == 1 && segs[0] == "extendedAgentCard":
		return r, verbs{"GET": opCard}, nil
	case len(segs) == 1 && segs[0] == "tasks":
		return r, verbs{"GET": opListTasks}, nil
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
	}
	if r.id, err = decodeSegment(raw, "task id"); err != nil {
		return r, nil, err
	}
	switch {
	case len(segs) == 2 && !hasCustom:
		return r, verbs{"GET": opGetTask}, nil
	case len(segs) == 2 && custom == "cancel":
		return r, verbs{"POST": opCancel}, nil
	case len(segs) == 2 && custom == "subscribe":
		// The proto says GET, the spec prose POST (A2A#1574): both.
		return r, verbs{"GET": opSubscribe, "POST": opSubscribe}, nil
	case len(segs) == 3 && segs[2] == "pushNotificationConfigs":
		return r, verbs{"POST": opCreatePush, "GET": opListPush}, nil
	case len(segs) == 4 && segs[2] == "pushNotificationConfigs":
		if r.configID, err = decodeSegment(segs[3], "push notification config id"); err != nil {
			return r, nil, err
		}
		return r, verbs{"GET": opGetPush, "DELETE": opDeletePush}, nil
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
