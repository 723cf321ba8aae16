package proxy

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/testlog"
)

// TestFrontEndRefusalsCounted: a call the REST or gRPC front end refuses
// itself, before the core sees it, is counted in requests_total and logged
// as a "call" line, as the core's own refusals are, with its binding, the
// dialect its caller spoke and its operation; a caller refused for its
// token there counts once, as unauthenticated. Such calls had left no
// trace in the metrics or the log.
func TestFrontEndRefusalsCounted(t *testing.T) {
	reg := prometheus.NewRegistry()
	var logs testlog.Buffer
	opts := Options{Metrics: NewMetrics(reg, nil), Logger: slog.New(slog.NewJSONHandler(&logs, nil))}
	g := newGatewayOpts(t, backends[1].handler(t, nil), dialect.Version10, opts, withAuth(t)).as(token(t, "alice"))

	res, _ := g.request(t, http.MethodPost, "/message:send", `{"message":`, "Content-Type", "application/json", "Authorization", bearerOf(g.token))
	res03, _ := g.request(t, http.MethodGet, "/v1/tasks/t1?bogus=1", "", "Authorization", bearerOf(g.token))
	anon, _ := g.request(t, http.MethodPost, "/message:send", `{"message":`, "Content-Type", "application/json")
	if res.StatusCode != http.StatusBadRequest || res03.StatusCode != http.StatusBadRequest || anon.StatusCode != http.StatusUnauthorized {
		t.Fatalf("REST refusals answered HTTP %d, %d, %d; want 400, 400, 401", res.StatusCode, res03.StatusCode, anon.StatusCode)
	}
	for _, transport := range grpcTransports {
		gg := transport.serve(t, g)
		req := &a2apb.GetTaskRequest{Id: "t1"}
		req.ProtoReflect().SetUnknown(protowire.AppendVarint(protowire.AppendTag(nil, 99, protowire.VarintType), 1))
		_, err := gg.raw.GetTask(context.Background(), req)
		wantStatus(t, err, codes.InvalidArgument, "INVALID_PARAMS")
	}

	want := map[string]float64{
		"http_json 1.0 send_message caller_error -32700":    1,
		"http_json 0.x get_task caller_error -32602":        1,
		"http_json 1.0 send_message unauthenticated -31401": 1,
		"grpc 1.0 get_task caller_error -32602":             2,
	}
	got := map[string]float64{}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "a2a_gateway_requests_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			l := map[string]string{}
			for _, p := range m.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			got[strings.Join([]string{l["binding"], l["caller_dialect"], l["op"], l["outcome"], l["code"]}, " ")] += m.GetCounter().GetValue()
		}
	}
	for series, n := range want {
		if got[series] != n {
			t.Errorf("requests_total{%s} = %v, want %v (all: %v)", series, got[series], n, got)
		}
	}
	lines := map[string]int{}
	for line := range strings.Lines(logs.String()) {
		if strings.Contains(line, `"msg":"call"`) {
			for _, b := range []string{"grpc", "http_json"} {
				if strings.Contains(line, `"binding":"`+b+`"`) {
					lines[b]++
				}
			}
		}
	}
	if lines["grpc"] != 2 || lines["http_json"] != 3 {
		t.Errorf("call lines by binding %v, want grpc 2, http_json 3:\n%s", lines, logs.String())
	}
}
