package rest

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/a2agate/gateway/dialect"
)

type queryKind uint8

const (
	qString queryKind = iota
	qInt32
	qBool
	qTimestamp
	qTaskState
)

// queryField is one request message field a query parameter sets. names
// lists what callers spell it: the ProtoJSON lowerCamel name first, then
// the proto name, then SDK spellings.
type queryField struct {
	names []string
	kind  queryKind
	// key is the params field set when it is not names[0].
	key string
	// zeroAbsent: 0 means the field is unset (0.3's historyLength: no limit).
	zeroAbsent bool
	// orBody: the body may give the field too, and must give the same:
	// one of the two would be dropped.
	orBody bool
	// agree: a value the path already set must be the same.
	agree bool
}

var (
	qHistoryLength = queryField{names: []string{"historyLength", "history_length"}, kind: qInt32}
	qPageSize      = queryField{names: []string{"pageSize", "page_size"}, kind: qInt32}
	qPageToken     = queryField{names: []string{"pageToken", "page_token"}, kind: qString}
	// A bodiless request's fields the path does not bind are query
	// parameters (google.api.http), tenant among them; /{tenant}/… is the
	// other spelling, and the two may not disagree.
	qTenant = queryField{names: []string{"tenant"}, kind: qString, agree: true}
	// 0.3's GetTaskRequest.history_length is no optional: 0 is "no limit".
	qHistoryLengthV03 = queryField{names: []string{"historyLength", "history_length"}, kind: qInt32, zeroAbsent: true}
	// 0.3's create takes the config id beside the body (body: "config").
	qConfigIDV03 = queryField{names: []string{"configId", "config_id"}, kind: qString, key: "id", orBody: true}
	// a2a-go v2.3.1's REST client sends statusTimestampAfter as
	// lastUpdatedAfter.
	listTasksQuery = []queryField{
		{names: []string{"contextId", "context_id"}, kind: qString},
		{names: []string{"status"}, kind: qTaskState},
		qPageSize, qPageToken, qHistoryLength, qTenant,
		{names: []string{"statusTimestampAfter", "status_timestamp_after", "lastUpdatedAfter"}, kind: qTimestamp},
		{names: []string{"includeArtifacts", "include_artifacts"}, kind: qBool},
	}
)

var taskStates = []string{
	"TASK_STATE_UNSPECIFIED", "TASK_STATE_SUBMITTED", "TASK_STATE_WORKING", "TASK_STATE_COMPLETED",
	"TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_INPUT_REQUIRED", "TASK_STATE_REJECTED",
	"TASK_STATE_AUTH_REQUIRED",
}

// cutVersion takes the A2A-Version parameter out of a raw query: the spec
// lets it stand for the header (§3.6.1), as JSON-RPC reads it; it is no
// field of the request, and the rest of the query is left as it was.
func cutVersion(rawQuery string) (rest, version string, _ *apiError) {
	// The name is compared decoded, as url.ParseQuery reads the others:
	// A2A%2DVersion would otherwise be refused as an unknown parameter.
	if !strings.Contains(rawQuery, dialect.HeaderVersion) && !strings.Contains(rawQuery, "%") {
		return rawQuery, "", nil
	}
	var kept []string
	seen := false
	for part := range strings.SplitSeq(rawQuery, "&") {
		k, v, _ := strings.Cut(part, "=")
		if name, err := url.QueryUnescape(k); err != nil || name != dialect.HeaderVersion {
			kept = append(kept, part)
			continue
		}
		if seen {
			return "", "", badParam("query parameter " + dialect.HeaderVersion + " is given more than once")
		}
		var err error
		if version, err = url.QueryUnescape(v); err != nil {
			return "", "", badParam("the query string is not validly encoded")
		}
		seen = true
	}
	return strings.Join(kept, "&"), version, nil
}

// applyQuery sets the params fields the query names, in their ProtoJSON
// types. Unknown and repeated parameters are refused: a filter the gateway
// silently ignored would answer a different question than the one asked.
func applyQuery(params []byte, fields []queryField, rawQuery string) ([]byte, *apiError) {
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return nil, badParam("the query string is not validly encoded")
	}
	// In name order, so which of two bad parameters is named is stable.
	// Arrays on the stack for the usual few names and fields.
	var nameBuf [8]string
	names := nameBuf[:0]
	for name := range q {
		names = append(names, name)
	}
	slices.Sort(names)
	var seenBuf [16]bool
	seen := append(seenBuf[:0], make([]bool, len(fields))...)
	for _, name := range names {
		fi := slices.IndexFunc(fields, func(f queryField) bool { return slices.Contains(f.names, name) })
		if fi < 0 {
			return nil, badParam("unknown query parameter " + strconv.Quote(truncate(name, 64)))
		}
		if seen[fi] || len(q[name]) != 1 {
			return nil, badParam("query parameter " + fields[fi].names[0] + " is given more than once")
		}
		seen[fi] = true
		var ferr *apiError
		if params, ferr = setQueryField(params, fields[fi], name, q[name][0]); ferr != nil {
			return nil, ferr
		}
	}
	return params, nil
}

func setQueryField(params []byte, f queryField, name, v string) ([]byte, *apiError) {
	key := f.names[0]
	if f.key != "" {
		key = f.key
	}
	if prev := gjson.GetBytes(params, key); f.orBody && prev.Exists() {
		if prev.Type == gjson.String && prev.Str == v {
			return params, nil
		}
		return nil, badParam("query parameter " + name + " names " + strconv.Quote(truncate(v, 64)) + ", the body " + truncate(prev.Raw, 64) + ": give the config id once, or the same in both")
	}
	if prev := gjson.GetBytes(params, key); f.agree && prev.Exists() && prev.Str != v {
		return nil, badParam("query parameter " + name + " names " + strconv.Quote(truncate(v, 64)) + ", the path " + strconv.Quote(truncate(prev.Str, 64)) + ": give it once")
	}
	var err error
	switch f.kind {
	case qString:
		if !utf8.ValidString(v) {
			return nil, badParam("query parameter " + name + " is not valid UTF-8")
		}
		params, err = sjson.SetBytes(params, key, v)
	case qInt32:
		n, perr := strconv.ParseInt(v, 10, 32)
		if perr != nil {
			return nil, badParam("query parameter " + name + " must be a 32-bit integer, not " + strconv.Quote(truncate(v, 32)))
		}
		if n == 0 && f.zeroAbsent {
			return params, nil
		}
		params, err = sjson.SetBytes(params, key, n)
	case qBool:
		b, perr := strconv.ParseBool(v)
		if perr != nil || (v != "true" && v != "false" && v != "1" && v != "0") {
			return nil, badParam("query parameter " + name + " must be true or false, not " + strconv.Quote(truncate(v, 32)))
		}
		params, err = sjson.SetBytes(params, key, b)
	case qTimestamp:
		t, perr := time.Parse(time.RFC3339Nano, v)
		if perr != nil {
			return nil, badParam("query parameter " + name + " must be an RFC 3339 timestamp, not " + strconv.Quote(truncate(v, 40)))
		}
		params, err = sjson.SetBytes(params, key, t.UTC().Format(time.RFC3339Nano))
	case qTaskState:
		if n, perr := strconv.Atoi(v); perr == nil && n >= 0 && n < len(taskStates) {
			v = taskStates[n] // ProtoJSON accepts enum numbers too
		}
		if !slices.Contains(taskStates, v) {
			return nil, badParam("query parameter " + name + " must be a TaskState name such as TASK_STATE_WORKING, not " + strconv.Quote(truncate(v, 40)))
		}
		params, err = sjson.SetBytes(params, key, v)
	}
	if err != nil {
		return nil, newError(http.StatusInternalServerError, dialect.ErrInternal, "building the request failed")
	}
	return params, nil
}

func badParam(msg string) *apiError {
	return newError(http.StatusBadRequest, dialect.ErrInvalidParams, msg)
}
