package agent10

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/a2agate/gateway/internal/agentcore"
)

func TestEnvelopeErrors(t *testing.T) {
	t.Parallel()
	_, srv := startAgent(t, Options{})
	tests := []struct {
		name, body string
		code       int
		id         any
	}{
		{"not JSON", `{"jsonrpc":`, codeParseError, nil},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}]`, codeInvalidRequest, nil},
		{"not an object", `42`, codeInvalidRequest, nil},
		{"notification", `{"jsonrpc":"2.0","method":"GetTask","params":{"id":"x"}}`, codeInvalidRequest, nil},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"GetTask"}`, codeInvalidRequest, nil},
		{"wrong version", `{"jsonrpc":"1.0","id":7,"method":"GetTask","params":{"id":"x"}}`, codeInvalidRequest, json.Number("7")},
		{"method not a string", `{"jsonrpc":"2.0","id":"a","method":5}`, codeInvalidRequest, "a"},
		{"unknown method", `{"jsonrpc":"2.0","id":"a","method":"GetTasks","params":{}}`, codeMethodNotFound, "a"},
		{"0.x method", `{"jsonrpc":"2.0","id":"a","method":"message/send","params":{}}`, codeMethodNotFound, "a"},
		{"0.3 card method", `{"jsonrpc":"2.0","id":"a","method":"agent/getAuthenticatedExtendedCard"}`, codeMethodNotFound, "a"},
		{"array params", `{"jsonrpc":"2.0","id":"a","method":"GetTask","params":["x"]}`, codeInvalidParams, "a"},
		{"params of the wrong type", `{"jsonrpc":"2.0","id":"a","method":"GetTask","params":{"id":5}}`, codeInvalidParams, "a"},
		{"string historyLength", `{"jsonrpc":"2.0","id":"a","method":"GetTask","params":{"id":"x","historyLength":"5"}}`, codeInvalidParams, "a"},
		{"missing params", `{"jsonrpc":"2.0","id":"a","method":"GetTask"}`, codeInvalidParams, "a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out := rpcRaw(t, srv, tt.body)
			e, ok := out["error"].(obj)
			if !ok {
				t.Fatalf("want an error, got %v", out)
			}
			wantCode(t, e, tt.code)
			if out["id"] != tt.id || out["jsonrpc"] != "2.0" {
				t.Fatalf("envelope = %v, want id %v", out, tt.id)
			}
		})
	}
}

func TestMethodNotFoundNamesMethod(t *testing.T) {
	t.Parallel()
	_, srv := startAgent(t, Options{})
	md := wantCode(t, callErr(t, srv, "tasks/get", obj{"id": "x"}), codeMethodNotFound)
	wantJSON(t, "metadata", md, obj{"method": "tasks/get"})
}

func TestVersionHeader(t *testing.T) {
	t.Parallel()
	_, srv := startAgent(t, Options{})
	body := rpcRequest("GetTask", obj{"id": "none"})
	tests := []struct {
		name, version string
		query         string
		ok            bool
		requested     string
	}{
		{"1.0", "1.0", "", true, ""},
		{"patch", "1.0.1", "", true, ""},
		{"minor", "1.1", "", true, ""},
		{"query parameter", "", "?A2A-Version=1.0", true, ""},
		{"absent means 0.3", "", "", false, "0.3"},
		{"0.3", "0.3", "", false, "0.3"},
		{"2.0", "2.0", "", false, "2.0"},
		{"10.0", "10.0", "", false, "10.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/"+tt.query, strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			if tt.version != "" {
				req.Header.Set("A2A-Version", tt.version)
			}
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			e := decodeResponse(t, resp)["error"].(obj)
			if tt.ok {
				wantCode(t, e, codeTaskNotFound) // past the version check
				return
			}
			md := wantCode(t, e, codeVersionNotSupported)
			wantJSON(t, "metadata", md, obj{"requestedVersion": tt.requested, "supportedVersions": "1.0"})
		})
	}

	// An unknown method is reported as such whatever the version.
	e := decodeResponse(t, postVersion(t, srv, rpcRequest("message/send", obj{}), ""))["error"].(obj)
	wantCode(t, e, codeMethodNotFound)
	// Streaming methods check the version before anything is streamed.
	resp := postVersion(t, srv, rpcRequest("SendStreamingMessage", send("hello")), "")
	wantCode(t, decodeResponse(t, resp)["error"].(obj), codeVersionNotSupported)
}

func TestIDIsEchoedVerbatim(t *testing.T) {
	t.Parallel()
	_, srv := startAgent(t, Options{})
	resp := post(t, srv, `{"jsonrpc":"2.0","id":12345678901234567890,"method":"GetTask","params":{"id":"none"}}`)
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"id":12345678901234567890`) {
		t.Fatalf("id not echoed verbatim: %s", b)
	}
}

func TestClosedAgentRefusesCalls(t *testing.T) {
	t.Parallel()
	a, srv := startAgent(t, Options{})
	a.Close()
	if resp := post(t, srv, rpcRequest("GetTask", obj{"id": "x"})); resp.StatusCode != 503 {
		t.Fatalf("status after Close = %d, want 503", resp.StatusCode)
	}
}

func TestOversizedBodyIsRefused(t *testing.T) {
	t.Parallel()
	_, srv := startAgent(t, Options{})
	body := `{"jsonrpc":"2.0","id":"a","method":"GetTask","params":{"id":"` + strings.Repeat("x", agentcore.MaxRequestBytes) + `"}}`
	e, ok := rpcRaw(t, srv, body)["error"].(obj)
	if !ok {
		t.Fatal("an oversized request was accepted")
	}
	wantCode(t, e, codeInvalidRequest)
}
