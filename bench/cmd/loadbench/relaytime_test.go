package main

import (
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// relayMetrics is what a gateway's /metrics holds of the relay time
// histogram: two agents, in the client library's text format.
const relayMetrics = `# HELP a2a_gateway_stream_event_relay_seconds Time each stream event spent in the gateway.
# TYPE a2a_gateway_stream_event_relay_seconds histogram
a2a_gateway_stream_event_relay_seconds_bucket{agent="bench",le="1e-05"} 40
a2a_gateway_stream_event_relay_seconds_bucket{agent="bench",le="5e-05"} 90
a2a_gateway_stream_event_relay_seconds_bucket{agent="bench",le="0.0001"} 99
a2a_gateway_stream_event_relay_seconds_bucket{agent="bench",le="0.001"} 100
a2a_gateway_stream_event_relay_seconds_bucket{agent="bench",le="+Inf"} 100
a2a_gateway_stream_event_relay_seconds_sum{agent="bench"} 0.0031
a2a_gateway_stream_event_relay_seconds_count{agent="bench"} 100
a2a_gateway_stream_event_relay_seconds_bucket{agent="other",le="1e-05"} 0
a2a_gateway_stream_event_relay_seconds_bucket{agent="other",le="5e-05"} 0
a2a_gateway_stream_event_relay_seconds_bucket{agent="other",le="0.0001"} 0
a2a_gateway_stream_event_relay_seconds_bucket{agent="other",le="0.001"} 0
a2a_gateway_stream_event_relay_seconds_bucket{agent="other",le="+Inf"} 7
a2a_gateway_streams_active{agent="bench"} 0
`

func TestRelayTimeQuantiles(t *testing.T) {
	b, err := parseRelayTime(strings.NewReader(relayMetrics), "bench")
	if err != nil {
		t.Fatal(err)
	}
	if b.total() != 100 || len(b.le) != 5 {
		t.Fatalf("parsed %+v", b)
	}
	for q, want := range map[float64]float64{0.40: 1e-5, 0.41: 5e-5, 0.50: 5e-5, 0.99: 1e-4, 0.995: 1e-3, 1: 1e-3} {
		if got := b.quantileBound(q); got != want {
			t.Errorf("quantile %v: bound %v, want %v", q, got, want)
		}
	}
	if got := b.shareWithin(relayBudget); got != 0.99 {
		t.Errorf("share within 100 µs %v, want 0.99", got)
	}
	other, err := parseRelayTime(strings.NewReader(relayMetrics), "other")
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsInf(other.quantileBound(0.5), 1) {
		t.Errorf("every event above the last finite bound: quantile %v, want +Inf", other.quantileBound(0.5))
	}
}

// TestRelayTimeSinceWarmup: the row counts only the events observed
// between the scrape after the warm-up and the one at the end, and a
// gateway that had relayed nothing at the first scrape has no series yet.
func TestRelayTimeSinceWarmup(t *testing.T) {
	var metrics atomic.Value // string: what /metrics answers now
	admin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(metrics.Load().(string)))
	}))
	defer admin.Close()
	addr := strings.TrimPrefix(admin.URL, "http://")

	metrics.Store("a2a_gateway_streams_active{agent=\"bench\"} 3\n")
	before, err := scrapeRelayTime(addr, benchAgent)
	if err != nil {
		t.Fatal(err)
	}
	metrics.Store(relayMetrics)
	var row streamRow
	if err := row.setRelayTime(before, nil, addr); err != nil {
		t.Fatal(err)
	}
	if row.RelayEvents != 100 || row.RelayP50UsMax != 50 || row.RelayP99UsMax != 100 || row.RelayWithin100UsPct != 99 {
		t.Fatalf("from no series: %+v", row)
	}

	warm, err := parseRelayTime(strings.NewReader(strings.NewReplacer(`"1e-05"} 40`, `"1e-05"} 30`, `"5e-05"} 90`, `"5e-05"} 80`,
		`"0.0001"} 99`, `"0.0001"} 80`, `"0.001"} 100`, `"0.001"} 80`, `"+Inf"} 100`, `"+Inf"} 80`).Replace(relayMetrics)), benchAgent)
	if err != nil {
		t.Fatal(err)
	}
	row = streamRow{}
	if err := row.setRelayTime(warm, nil, addr); err != nil {
		t.Fatal(err)
	}
	// After the warm-up: 10 within 10 µs, 10 within 50 µs... of 20.
	if row.RelayEvents != 20 || row.RelayP50UsMax != 10 || row.RelayP99UsMax != 1000 || row.RelayWithin100UsPct != 95 {
		t.Fatalf("since the warm-up: %+v", row)
	}

	metrics.Store("a2a_gateway_streams_active{agent=\"bench\"} 3\n")
	if err := (&streamRow{}).setRelayTime(before, nil, addr); err == nil {
		t.Fatal("a gateway without the histogram at the end must be an error, not a row without figures")
	}
}
