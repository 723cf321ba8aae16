package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"
)

// The JSON-RPC and A2A error codes the scenarios expect.
const (
	CodeParseError           = -32700
	CodeMethodNotFound       = -32601
	CodeInvalidParams        = -32602
	CodeTaskNotFound         = -32001
	CodeTaskNotCancelable    = -32002
	CodeUnsupportedOperation = -32004
)

// ErrorCodes maps an SDK's sentinel errors back to JSON-RPC codes, for SDKs
// that keep no code on the error they return.
type ErrorCodes []struct {
	Err  error
	Code int
}

// Of is the code of the first sentinel err wraps.
func (t ErrorCodes) Of(err error) (int, bool) {
	for _, rc := range t {
		if errors.Is(err, rc.Err) {
			return rc.Code, true
		}
	}
	return 0, false
}

// ExpectCode ends the scenario unless err is an error whose code, read by
// codeOf, is one of codes.
func ExpectCode(c Checker, codeOf func(error) (int, bool), err error, what string, codes ...int) {
	if err == nil {
		c.Fatalf("%s: expected JSON-RPC error %v, got success", what, codes)
	}
	if code, ok := codeOf(err); ok && slices.Contains(codes, code) {
		return
	}
	c.Fatalf("%s: expected JSON-RPC error %v, got %v", what, codes, err)
}

// ErrorCode is the code of a decoded JSON-RPC error response, 0 when it
// holds none.
func ErrorCode(resp map[string]any) int {
	errObj, _ := resp["error"].(map[string]any)
	code, _ := errObj["code"].(float64)
	return int(code)
}

// PostRaw posts body verbatim to url with header added, for the requests
// no SDK can produce (unknown method, malformed JSON), and decodes the JSON
// answer; it returns the answer and its Content-Type.
func PostRaw(ctx context.Context, c Checker, client *http.Client, url, body string, header http.Header) (map[string]any, string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewBufferString(body))
	c.NoErr(err, "build request")
	req.Header.Set("Content-Type", "application/json")
	for k, vs := range header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	resp, err := client.Do(req)
	c.NoErr(err, "post")
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	c.NoErr(err, "read body")
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		c.Fatalf("HTTP %d %s with a non-JSON body: %.300s", resp.StatusCode, resp.Header.Get("Content-Type"), raw)
	}
	return out, resp.Header.Get("Content-Type")
}

// jsonrpcOnly are the scenarios that post a JSON-RPC envelope by hand
// (an unknown method name, a truncated JSON-RPC body): the REST and gRPC
// bindings have no method name or envelope to get wrong, and their own
// error answers (unknown route, bad JSON, wrong verb) are binding/rest's
// and binding/grpc's golden tests, not something the SDK client sends.
var jsonrpcOnly = map[string]bool{"error-unknown-method": true, "error-malformed-json": true}

// JSONRPCOnly says why scenario cannot run over binding, the SDK's name of
// the transport, when it posts a JSON-RPC envelope by hand; "" when it can.
func JSONRPCOnly(binding, scenario string) string {
	if binding != "JSONRPC" && jsonrpcOnly[scenario] {
		return fmt.Sprintf("skipped over %s: the scenario posts a hand-made JSON-RPC envelope", binding)
	}
	return ""
}

// Deviations mirrors NATIVE_DEVIATIONS in clients/scenarios.mjs: for a
// scenario, the native SDK servers (backend labels) whose answer departs
// from their own spec, accepted (and asserted exactly) only in direct runs,
// never through a gateway.
type Deviations map[string][]string

// Apply reports whether the scenario meets one of those answers: a direct
// run against a listed backend.
func (d Deviations) Apply(direct bool, backend, scenario string) bool {
	return direct && slices.Contains(d[scenario], backend)
}

// Poll calls step until it reports done, every 50ms; the scenario's context
// bounds the wait, and a scenario that runs out of it fails saying what
// step last reported.
func Poll(ctx context.Context, c Checker, step func() (done bool, last string)) {
	for {
		done, last := step()
		if done {
			return
		}
		select {
		case <-ctx.Done():
			c.Fatalf("%s: %v", last, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Ptr returns a pointer to v, for the SDKs' optional request fields.
func Ptr[T any](v T) *T { return &v }
