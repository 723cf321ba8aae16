package agent10

import (
	"net/http"
	"strings"
	"testing"

	"github.com/a2agate/gateway/internal/agentcore"
	"github.com/a2agate/gateway/internal/agenttest"
)

func TestVersionHeader(t *testing.T) {
	srv := parallelAgent(t)
	body := agenttest.RPCRequest("GetTask", obj{"id": "none"})
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
			e := agenttest.DecodeResponse(t, resp)["error"].(obj)
			if tt.ok {
				wantCode(t, e, agentcore.CodeTaskNotFound) // past the version check
				return
			}
			md := wantCode(t, e, codeVersionNotSupported)
			agenttest.WantJSON(t, "metadata", md, obj{"requestedVersion": tt.requested, "supportedVersions": "1.0"})
		})
	}

	// An unknown method is reported as such whatever the version.
	e := agenttest.DecodeResponse(t, postVersion(t, srv, agenttest.RPCRequest("message/send", obj{}), ""))["error"].(obj)
	wantCode(t, e, agentcore.CodeMethodNotFound)
	// Streaming methods check the version before anything is streamed.
	resp := postVersion(t, srv, agenttest.RPCRequest("SendStreamingMessage", send("hello")), "")
	wantCode(t, agenttest.DecodeResponse(t, resp)["error"].(obj), codeVersionNotSupported)
}
