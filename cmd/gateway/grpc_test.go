package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"github.com/tidwall/gjson"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/a2agate/gateway/internal/redistopo"
	"github.com/a2agate/gateway/internal/testfiles"
	"github.com/a2agate/gateway/internal/testnet"
	"github.com/a2agate/gateway/proxy"
)

// TestGRPCOnTrafficListener: the binary's traffic listener speaks gRPC
// (h2c prior knowledge, as grpc-go clients dial) next to HTTP/1.1 JSON-RPC,
// to the official a2a-go v2 gRPC client, in front of the 0.2.5 agent.
func TestGRPCOnTrafficListener(t *testing.T) {
	backend := startLegacyBackend(t)
	g := startGateway(t, gatewayConfig(backend.URL+"/", "Helpdesk"))

	addr := strings.TrimPrefix(g.url, "http://")
	sendOverGRPC(t, addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if status, body := httpGet(t, g.url+"/.well-known/agent.json"); status != 200 || !strings.Contains(body, "Helpdesk") {
		t.Fatalf("HTTP/1.1 beside gRPC: %d %s", status, body)
	}
}

// sendOverGRPC sends a message with the official a2a-go v2 gRPC client to
// the gRPC target addr and wants the 0.2.5 agent's completed task.
func sendOverGRPC(t *testing.T, addr string, opts ...grpc.DialOption) {
	t.Helper()
	client, err := a2aclient.NewFromEndpoints(context.Background(),
		[]*a2a.AgentInterface{a2a.NewAgentInterface(addr, a2a.TransportProtocolGRPC)},
		a2agrpc.WithGRPCTransport(opts...))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Destroy()
	res, err := client.SendMessage(context.Background(), &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hello"))})
	if err != nil {
		t.Fatalf("send over gRPC to %s: %v", addr, err)
	}
	if task, ok := res.(*a2a.Task); !ok || task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("send over gRPC to %s: %#v", addr, res)
	}
}

// testCerts are a fresh test CA's certificate files and a client config
// that trusts that CA alone.
func testCerts(t *testing.T) (redistopo.TLSFiles, *tls.Config) {
	t.Helper()
	files := redistopo.MakeCerts(t, t.TempDir())
	pem, err := os.ReadFile(files.CA)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		t.Fatal("the test CA does not parse")
	}
	return files, &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
}

// grpcInterface is the URL of the card's GRPC interface at 1.0.
func grpcInterface(t *testing.T, client *http.Client, cardURL string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, cardURL, nil)
	req.Header.Set("A2A-Version", "1.0")
	_, body := testnet.RoundTrip(t, client, req)
	for _, i := range gjson.GetBytes(body, "supportedInterfaces").Array() {
		if i.Get("protocolBinding").Str == "GRPC" {
			return i.Get("url").Str
		}
	}
	t.Fatalf("the card lists no GRPC interface: %s", body)
	return ""
}

// TestGRPCOverTLS: with tls on the traffic listener, gRPC is served on it
// over TLS (HTTP/2 by ALPN, routed by content type beside HTTP/1.1
// JSON-RPC), and an agent's grpc_listen serves it on a listener of its own
// with the traffic listener's certificate or its own grpc_tls, where the
// cards say, to the official a2a-go v2 gRPC client over TLS.
func TestGRPCOverTLS(t *testing.T) {
	backend := startLegacyBackend(t)
	files, clientTLS := testCerts(t)
	ownFiles, ownClientTLS := testCerts(t) // another CA
	agent := func(name, path, extra string) string {
		return `  - name: ` + name + `
    path: ` + path + `
    public_url: https://localhost` + path + `
    backend: {url: "` + backend.URL + `/", dialect: "0.2.5"}
    skills: {default: work}
` + extra
	}
	g := startGateway(t, `listen: 127.0.0.1:0
tls: {cert_file: `+files.ServerCert+`, key_file: `+files.ServerKey+`}
agents:
`+agent("root", "/", "")+agent("own", "/own", "    grpc_listen: 127.0.0.1:0\n")+
		agent("owncert", "/owncert", "    grpc_listen: 127.0.0.1:0\n    grpc_tls: {cert_file: "+ownFiles.ServerCert+", key_file: "+ownFiles.ServerKey+"}\n"))
	addr := strings.TrimPrefix(g.url, "http://")
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: clientTLS.Clone(), ForceAttemptHTTP2: true}}
	defer client.CloseIdleConnections()
	creds := grpc.WithTransportCredentials(credentials.NewTLS(clientTLS.Clone()))

	// The traffic listener: HTTP/1.1 and HTTP/2 by ALPN, gRPC among them
	// for the agent at "/", whose card lists it at public_url's host:port.
	if got := grpcInterface(t, client, "https://"+addr+"/.well-known/agent-card.json"); got != "localhost:443" {
		t.Fatalf("root's card lists gRPC at %q, want public_url's localhost:443", got)
	}
	sendOverGRPC(t, addr, creds)
	for _, proto := range []string{"http/1.1", "h2"} {
		tc := clientTLS.Clone()
		tc.NextProtos = []string{proto}
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: tc, ForceAttemptHTTP2: proto == "h2"}}
		res, err := c.Post("https://"+addr+"/own", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"none"}}`))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		c.CloseIdleConnections()
		if res.ProtoMajor != map[string]int{"http/1.1": 1, "h2": 2}[proto] || gjson.GetBytes(body, "error.code").Int() != -32001 {
			t.Fatalf("JSON-RPC over TLS with ALPN %s: %s %s", proto, res.Proto, body)
		}
	}

	// grpc_listen with the traffic listener's certificate, at the port the
	// card names.
	own := grpcInterface(t, client, "https://"+addr+"/own/.well-known/agent-card.json")
	if !strings.HasPrefix(own, "localhost:") || own == "localhost:443" {
		t.Fatalf("own's card lists gRPC at %q, want its grpc_listen's port", own)
	}
	sendOverGRPC(t, own, creds)
	// grpc_listen with a certificate of its own: only its CA's clients
	// trust it.
	owncert := grpcInterface(t, client, "https://"+addr+"/owncert/.well-known/agent-card.json")
	sendOverGRPC(t, owncert, grpc.WithTransportCredentials(credentials.NewTLS(ownClientTLS.Clone())))
	if err := getTaskOverGRPC(owncert, creds); err == nil {
		t.Fatal("owncert's grpc_listen served the traffic listener's certificate")
	}
}

// getTaskOverGRPC makes one call to target with opts and returns its error.
func getTaskOverGRPC(target string, opts ...grpc.DialOption) error {
	client, err := a2aclient.NewFromEndpoints(context.Background(),
		[]*a2a.AgentInterface{a2a.NewAgentInterface(target, a2a.TransportProtocolGRPC)}, a2agrpc.WithGRPCTransport(opts...))
	if err != nil {
		return err
	}
	defer client.Destroy()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = client.GetTask(ctx, &a2a.GetTaskRequest{ID: "none"})
	return err
}

// TestGRPCListenConfig: the grpc_listen settings are checked with the
// config, every problem reported, and a reload that changes them is refused
// (a listener's settings change only with a restart).
func TestGRPCListenConfig(t *testing.T) {
	base := gatewayConfig("http://127.0.0.1:1/", "x")
	with := func(agentLines string) string { return base + agentLines }
	for _, c := range []struct{ extra, want string }{
		{"    grpc_listen: 127.0.0.1:9555\n    bindings: [jsonrpc]\n", "grpc_listen is set but bindings leaves grpc out"},
		{"    grpc_tls: {cert_file: a.pem, key_file: a-key.pem}\n", "grpc_tls and grpc_public_address need grpc_listen"},
		{"    grpc_listen: 127.0.0.1:9555\n    grpc_tls: {cert_file: a.pem}\n", "grpc_tls: cert_file and key_file are both required"},
		{"    grpc_listen: 127.0.0.1:9555\n    grpc_public_address: nohost\n", `grpc_public_address "nohost" is not host:port`},
		{"    grpc_listen: 127.0.0.1:0\n  - name: two\n    path: /two\n    public_url: http://gateway.test/two\n    grpc_listen: 127.0.0.1:0\n    backend: {url: \"http://127.0.0.1:1/\", dialect: \"1.0\"}\n", ""},
		{"    grpc_listen: 127.0.0.1:9555\n  - name: two\n    path: /two\n    public_url: http://gateway.test/two\n    grpc_listen: 127.0.0.1:9555\n    backend: {url: \"http://127.0.0.1:1/\", dialect: \"1.0\"}\n", `grpc_listen "127.0.0.1:9555" takes the port of agent "helpdesk"'s grpc_listen (127.0.0.1:9555)`},
	} {
		_, err := parseConfig([]byte(with(c.extra)))
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%q: got %v, want %q", c.extra, err, c.want)
		}
	}
	if _, err := parseConfig([]byte(strings.Replace(base, "agents:", "tls: {key_file: k.pem}\nagents:", 1))); err == nil || !strings.Contains(err.Error(), "tls: cert_file and key_file are both required") {
		t.Errorf("tls without cert_file: %v", err)
	}

	old, err := parseConfig([]byte(with("    grpc_listen: 127.0.0.1:0\n")))
	if err != nil {
		t.Fatal(err)
	}
	for _, next := range []string{base, with("    grpc_listen: 127.0.0.1:9555\n"), with("    grpc_listen: 127.0.0.1:0\n    max_body_bytes: 1024\n")} {
		cfg, err := parseConfig([]byte(next))
		if err != nil {
			t.Fatal(err)
		}
		if sameGRPCListeners(old, cfg) {
			t.Errorf("a reload to %q keeps the gRPC listener's settings", next)
		}
	}
	same, _ := parseConfig([]byte(strings.Replace(with("    grpc_listen: 127.0.0.1:0\n"), "name: x", "name: y", 1)))
	if !sameGRPCListeners(old, same) {
		t.Error("a reload that changes only the card counts as a gRPC listener change")
	}
}

// TestMaxConcurrentStreams: server.max_concurrent_streams is the bound on
// open calls that the traffic listener's HTTP/2 and an agent's grpc_listen
// both advertise to a new connection; unset, the default.
func TestMaxConcurrentStreams(t *testing.T) {
	backend := startLegacyBackend(t)
	for _, tc := range []struct {
		server string
		want   uint32
	}{{"", proxy.DefaultMaxConcurrentStreams}, {"server: {max_concurrent_streams: 7}\n", 7}} {
		g := startGateway(t, tc.server+gatewayConfig(backend.URL+"/", "Helpdesk")+"    grpc_listen: 127.0.0.1:0\n")
		if got := testnet.AdvertisedStreams(t, strings.TrimPrefix(g.url, "http://")); got != tc.want {
			t.Errorf("%q: the traffic listener allows %d streams a connection, want %d", tc.server, got, tc.want)
		}
		_, port, err := net.SplitHostPort(grpcInterface(t, http.DefaultClient, g.url+"/.well-known/agent-card.json"))
		if err != nil {
			t.Fatal(err)
		}
		if got := testnet.AdvertisedStreams(t, "127.0.0.1:"+port); got != tc.want {
			t.Errorf("%q: grpc_listen allows %d streams a connection, want %d", tc.server, got, tc.want)
		}
	}
}

// TestGRPCAuthenticatesBeforeDecoding: on the traffic listener and on an
// agent's grpc_listen, a caller without a token whose request message is
// no valid protobuf is refused as unauthenticated, as the same call with a
// well-formed message is, not told what is wrong with its message.
func TestGRPCAuthenticatesBeforeDecoding(t *testing.T) {
	backend := startLegacyBackend(t)
	secret := testfiles.Write(t, "hmac.secret", []byte(strings.Repeat("k", 32)+"\n"))
	authed := gatewayConfig(backend.URL+"/", "Helpdesk") + "    auth: {issuer: https://issuer.example.com/, algorithms: [HS256], hmac_secret_file: " + secret + "}\n"
	traffic := startGateway(t, authed)
	own := startGateway(t, authed+"    grpc_listen: 127.0.0.1:0\n")
	_, port, err := net.SplitHostPort(grpcInterface(t, http.DefaultClient, own.url+"/.well-known/agent-card.json"))
	if err != nil {
		t.Fatal(err)
	}
	for name, addr := range map[string]string{"traffic listener": strings.TrimPrefix(traffic.url, "http://"), "grpc_listen": "127.0.0.1:" + port} {
		conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		// Field 1 as bytes that are no UTF-8: no GetTaskRequest, whose
		// field 1 is a string.
		malformed := &wrapperspb.BytesValue{Value: []byte("t\xff")}
		got := status.Convert(conn.Invoke(context.Background(), a2apb.A2AService_GetTask_FullMethodName, malformed, new(emptypb.Empty)))
		want := status.Convert(conn.Invoke(context.Background(), a2apb.A2AService_GetTask_FullMethodName, &a2apb.GetTaskRequest{Id: "t1"}, new(a2apb.Task)))
		if want.Code() != codes.Unauthenticated || !proto.Equal(got.Proto(), want.Proto()) {
			t.Errorf("%s: a malformed GetTask without a token: %v\nwant the well-formed one's %v", name, got.Proto(), want.Proto())
		}
	}
}

// TestTLSCertificateRenewedInPlace: a certificate renewed in its files (as
// cert-manager does, well before the old one expires) is served to new
// connections without a restart; files that do not hold a valid pair
// leave the previous certificate served, logged.
func TestTLSCertificateRenewedInPlace(t *testing.T) {
	pollConfigEvery(t, 20*time.Millisecond)
	backend := startLegacyBackend(t)
	files, clientTLS := testCerts(t)
	renewed, renewedTLS := testCerts(t) // another CA's certificate
	clientTLS.RootCAs.AppendCertsFromPEM(must(os.ReadFile(renewed.CA)))
	g := startGateway(t, strings.Replace(gatewayConfig(backend.URL+"/", "x"), "agents:",
		"tls: {cert_file: "+files.ServerCert+", key_file: "+files.ServerKey+"}\nagents:", 1))
	addr := strings.TrimPrefix(g.url, "http://")
	served := func() string {
		t.Helper()
		c, err := tls.Dial("tcp", addr, clientTLS.Clone())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		return string(c.ConnectionState().PeerCertificates[0].Raw)
	}
	first := served()
	renewals := func(result string) string {
		t.Helper()
		return metricLine(t, g.admin, `a2a_gateway_tls_certificate_renewals_total{cert_file="`+files.ServerCert+`",result="`+result+`"}`)
	}
	if s, f := renewals("success"), renewals("failure"); s != "0" || f != "0" {
		t.Errorf("before any renewal: renewals success %q, failure %q; want both series at 0", s, f)
	}

	// A key without its certificate: the previous pair is served on.
	rewriteConfig(t, files.ServerKey, must(os.ReadFile(renewed.ServerKey)))
	eventually(t, "the failed renewal logged", func() bool {
		return strings.Contains(g.log.String(), "a TLS certificate's files changed but do not load")
	})
	if got := served(); got != first {
		t.Fatal("a half-renewed pair replaced the certificate")
	}
	if f := renewals("failure"); f != "1" {
		t.Errorf("after the half-renewed pair: renewals failure %q, want 1 (counted once, however many polls see it)", f)
	}
	rewriteConfig(t, files.ServerCert, must(os.ReadFile(renewed.ServerCert)))
	eventually(t, "the renewed certificate served", func() bool { return served() != first })
	// The new pair is served a moment before it is counted.
	eventually(t, "the renewal counted", func() bool { return renewals("success") == "1" })
	if _, err := tls.Dial("tcp", addr, renewedTLS.Clone()); err != nil {
		t.Fatalf("a client trusting only the renewed certificate's CA: %v", err)
	}
	if !strings.Contains(g.log.String(), "TLS certificate renewed from its files") {
		t.Error("the renewal is not logged")
	}
	// When the certificate served expires, for an alert on a renewal that
	// did not happen.
	c, err := tls.Dial("tcp", addr, clientTLS.Clone())
	if err != nil {
		t.Fatal(err)
	}
	notAfter := c.ConnectionState().PeerCertificates[0].NotAfter.Unix()
	c.Close()
	got := metricLine(t, g.admin, `a2a_gateway_tls_certificate_expiry_timestamp_seconds{cert_file="`+files.ServerCert+`"}`)
	if v, err := strconv.ParseFloat(got, 64); err != nil || int64(v) != notAfter {
		t.Errorf("a2a_gateway_tls_certificate_expiry_timestamp_seconds %q, want the served certificate's NotAfter %d", got, notAfter)
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
