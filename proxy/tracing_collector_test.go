package proxy

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/telemetry"
)

// collector is an OTLP endpoint that never takes spans: it holds every
// export until the test ends, or refuses it as overloaded (503, which the
// exporter retries).
func collector(t *testing.T, hang bool) (string, *atomic.Int64) {
	release := make(chan struct{})
	var exports atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		exports.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		if hang {
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		http.Error(w, "collector overloaded", http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // before Close, which waits for the handlers
	return srv.URL, &exports
}

func exportingTo(t *testing.T, endpoint string) *telemetry.Tracing {
	one := 1.0
	cfg := telemetry.Config{Enabled: true, SampleRatio: &one, OTLP: telemetry.OTLPConfig{Endpoint: endpoint}}
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	tr, err := telemetry.Setup(context.Background(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		_ = tr.Shutdown(ctx) // gives up on what the collector never took
	})
	return tr
}

// A collector that hangs or refuses costs the calls nothing they would not
// pay with a working one: the same calls, interleaved, through gateways
// with tracing off and exporting to such collectors, take about as long.
func TestFailingCollectorDoesNotSlowCalls(t *testing.T) {
	const calls = 200
	gateways := []struct {
		name    string
		g       *testGateway
		took    time.Duration
		exports *atomic.Int64
	}{
		{name: "tracing off"},
		{name: "hanging collector"},
		{name: "refusing collector"},
	}
	for i := range gateways {
		var tr *telemetry.Tracing
		if i > 0 {
			var url string
			url, gateways[i].exports = collector(t, i == 1)
			tr = exportingTo(t, url)
		}
		gateways[i].g = newGatewayOpts(t, backends[1].handler(t, nil), dialect.Version10, Options{Tracing: tr})
	}
	c := caller{dialect.V10}
	for n := range calls {
		for i := range gateways {
			start := time.Now()
			mustResult(t, gateways[i].g.call("1", "SendMessage", c.send("m", c.text("hello"), "")))
			gateways[i].took += time.Since(start)
			if n == 0 {
				gateways[i].took = 0 // the first call warms the connections
			}
		}
	}
	off := gateways[0].took
	for _, gw := range gateways {
		t.Logf("%d calls, %-18s %8s (%5.1fµs a call, %.2fx tracing off)", calls, gw.name+":", gw.took.Round(time.Microsecond),
			float64(gw.took.Microseconds())/calls, float64(gw.took)/float64(off))
	}
	for _, gw := range gateways[1:] {
		t.Logf("%s: %d exports tried so far", gw.name, gw.exports.Load())
		if bound := 3*off + 200*time.Millisecond; gw.took > bound {
			t.Errorf("%s: %d calls took %s, over the bound of %s (3x tracing off + 200ms)", gw.name, calls, gw.took, bound)
		}
	}
}
