package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

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
