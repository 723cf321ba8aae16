package proxy

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"testing"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"github.com/tidwall/gjson"
	"google.golang.org/protobuf/proto"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/testnet"
)

// TestH2CConnectionCarriesEveryBinding: one HTTP/2 connection to the
// traffic listener carries gRPC, JSON-RPC and HTTP+JSON calls side by side,
// each stream served by its own binding, as a proxy that pools its h2
// connections to the gateway sends them. This is why the listener does not
// hand a connection whose first stream is gRPC to grpc-go's own transport
// (cheaper per call than ServeHTTP): that transport answers any later
// non-gRPC stream on it 415, as the end of this test shows.
func TestH2CConnectionCarriesEveryBinding(t *testing.T) {
	backend := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"task not found"}}`)
	})
	g := newGRPCGateway(t, newGateway(t, backend, dialect.Version10))
	protocols := new(http.Protocols)
	protocols.SetUnencryptedHTTP2(true)
	tr := &http.Transport{Protocols: protocols}
	t.Cleanup(tr.CloseIdleConnections)
	client := &http.Client{Transport: tr}

	var first net.Conn
	send := func(req *http.Request) (*http.Response, []byte) {
		t.Helper()
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
			if first == nil {
				first = info.Conn
			} else if info.Conn != first {
				t.Errorf("%s %s went on another connection", req.Method, req.URL.Path)
			}
		}}))
		res, body := testnet.RoundTrip(t, client, req)
		if res.ProtoMajor != 2 {
			t.Fatalf("%s %s over %s, want HTTP/2", req.Method, req.URL.Path, res.Proto)
		}
		return res, body
	}

	// gRPC first, framed as any gRPC client frames a message: the
	// connection's first stream is a gRPC call.
	msg, err := proto.Marshal(&a2apb.GetTaskRequest{Id: "no-such-task"})
	if err != nil {
		t.Fatal(err)
	}
	frame := binary.BigEndian.AppendUint32([]byte{0}, uint32(len(msg)))
	req, _ := http.NewRequest(http.MethodPost, "http://"+g.addr+a2apb.A2AService_GetTask_FullMethodName, bytes.NewReader(append(frame, msg...)))
	req.Header.Set("Content-Type", "application/grpc")
	req.Header.Set("TE", "trailers")
	res, _ := send(req)
	if s := res.Trailer.Get("Grpc-Status") + res.Header.Get("Grpc-Status"); s != "5" {
		t.Fatalf("gRPC GetTask of an unknown task: grpc-status %q, want 5 (NotFound); %v %v", s, res.Header, res.Trailer)
	}

	// JSON-RPC on the same connection.
	req, _ = http.NewRequest(http.MethodPost, "http://"+g.addr+"/", strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"GetTask","params":{"id":"no-such-task"}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(dialect.HeaderVersion, "1.0")
	res, body := send(req)
	if code := gjson.GetBytes(body, "error.code").Int(); code != -32001 || gjson.GetBytes(body, "id").Int() != 7 {
		t.Fatalf("JSON-RPC GetTask beside gRPC: %d %s", res.StatusCode, body)
	}

	// And HTTP+JSON.
	req, _ = http.NewRequest(http.MethodGet, "http://"+g.addr+"/tasks/no-such-task", nil)
	res, body = send(req)
	if res.StatusCode != http.StatusNotFound || gjson.GetBytes(body, "error.status").Str != "NOT_FOUND" {
		t.Fatalf("HTTP+JSON GetTask beside gRPC: %d %s", res.StatusCode, body)
	}

	// grpc-go's own transport, as a grpc_listen serves it, refuses what the
	// traffic listener served beside gRPC.
	native := newNativeGRPCGateway(t, g.testGateway)
	req, _ = http.NewRequest(http.MethodPost, "http://"+native.addr+"/", strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"GetTask","params":{"id":"no-such-task"}}`))
	req.Header.Set("Content-Type", "application/json")
	first = nil
	if res, body := send(req); res.StatusCode != http.StatusUnsupportedMediaType {
		t.Fatalf("JSON-RPC on grpc-go's own transport: %d %s, want 415", res.StatusCode, body)
	}
}
