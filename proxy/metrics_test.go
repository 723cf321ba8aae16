package proxy

import (
	"context"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/a2agate/gateway/auth"
	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/legacyagent"
	"github.com/a2agate/gateway/push"
	"github.com/a2agate/gateway/store"
)

var updateMetrics = flag.Bool("update-metrics", false, "rewrite testdata/metrics/families.txt")

// familiesText lists every family's name, type and help, one per line.
func familiesText(t *testing.T, reg *prometheus.Registry) string {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, mf := range mfs {
		var labels []string
		if len(mf.GetMetric()) > 0 {
			for _, l := range mf.GetMetric()[0].GetLabel() {
				labels = append(labels, l.GetName())
			}
		}
		lines = append(lines, mf.GetName()+" "+strings.ToLower(mf.GetType().String())+" {"+strings.Join(labels, ",")+"} "+mf.GetHelp())
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n") + "\n"
}

// TestMetricsGolden drives traffic of every kind through a gateway and
// holds the metric families, with their labels and help, to a golden file.
func TestMetricsGolden(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg, nil)
	g := newGatewayOpts(t, backends[0].handler(t, nil), dialect.Version025, Options{Metrics: m}, withAuth(t))
	alice := g.as(token(t, "alice"))
	c := callers[0]
	mustResult(t, alice.call("1", "message/send", c.send("m1", c.text("hello"), "")))
	mustResult(t, alice.call("1", "message/send", c.send("m1", c.text("hello"), ""))) // a retry, counted as a call too
	alice.stream("2", "message/stream", c.send("m2", c.text("hello"), "")).all()
	wantError(t, alice.call("3", "tasks/get", `{"id":"nope"}`), c.d, -32001)
	g.post(rpc("tasks/get", `{"id":"x"}`)) // no token
	bad := newGatewayOpts(t, scripted(func(w http.ResponseWriter, r *http.Request, id string) { w.Write([]byte("nope")) }), dialect.Version03, Options{Metrics: m},
		func(a *AgentConfig) { a.Name = "broken"; a.Tasks.AllowUnknown = true })
	wantError(t, bad.call("4", "tasks/get", `{"id":"x"}`), c.d, -32006)
	bad.call("5", "message/send", `{"message":{}}`)

	if problems, err := testutil.GatherAndLint(reg); err != nil || len(problems) > 0 {
		t.Fatalf("promlint: %v %v", err, problems)
	}
	got := familiesText(t, reg)
	const golden = "testdata/metrics/families.txt"
	if *updateMetrics {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Fatalf("metric families changed (go test ./proxy -run MetricsGolden -update-metrics):\ngot:\n%s\nwant:\n%s", got, want)
	}
	for _, want := range []struct {
		labels map[string]string
		value  float64
	}{
		{map[string]string{"agent": "test", "op": "send_message", "outcome": "ok", "code": "0"}, 2},
		{map[string]string{"agent": "test", "op": "get_task", "outcome": "caller_error", "code": "-32001"}, 1},
		{map[string]string{"agent": "test", "op": "get_task", "outcome": "unauthenticated", "code": "-31401"}, 1},
		{map[string]string{"agent": "broken", "op": "get_task", "outcome": "backend_failure", "code": "-32006"}, 1},
		{map[string]string{"agent": "broken", "op": "send_message", "outcome": "caller_error", "code": "-32602"}, 1},
	} {
		if got := counterValue(t, reg, "a2a_gateway_requests_total", want.labels); got != want.value {
			t.Errorf("requests_total%v = %v, want %v", want.labels, got, want.value)
		}
	}
	if got := counterValue(t, reg, "a2a_gateway_auth_failures_total", map[string]string{"reason": "missing_token"}); got != 1 {
		t.Errorf("auth failures %v", got)
	}
	if got := counterValue(t, reg, "a2a_gateway_stream_events_total", map[string]string{"agent": "test"}); got < 3 {
		t.Errorf("stream events %v", got)
	}
	if got := counterValue(t, reg, "a2a_gateway_backend_errors_total", map[string]string{"agent": "broken", "kind": "invalid_reply"}); got != 1 {
		t.Errorf("backend errors %v", got)
	}
}

// counterValue sums the samples of a family whose labels include want.
func counterValue(t *testing.T, reg *prometheus.Registry, name string, want map[string]string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if hasLabels(m, want) {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return sum
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	n := 0
	for _, l := range m.GetLabel() {
		if v, ok := want[l.GetName()]; ok {
			if v != l.GetValue() {
				return false
			}
			n++
		}
	}
	return n == len(want)
}

// TestRequestsCounterLabels: calls with the same labels count on one series
// (whose counter the gateway remembers), and codes outside A2A's set share
// the "other" series.
func TestRequestsCounterLabels(t *testing.T) {
	m := NewMetrics(prometheus.NewRegistry(), nil)
	b := &backend{dialect: dialect.V10}
	observe := func(code int, outcome string) {
		c := &call{backend: b, code: code, outcome: outcome}
		c.env.Dialect, c.env.Op = dialect.V03, dialect.SendMessage
		m.observe("echo", c, time.Millisecond)
	}
	observe(0, "")
	observe(0, "")
	observe(12345, outcomeAgentError)
	observe(-1, outcomeAgentError)
	observe(-32001, outcomeAgentError)
	count := func(outcome, code string) float64 {
		return testutil.ToFloat64(m.requests.WithLabelValues("echo", "jsonrpc", dialect.V03.String(), dialect.V10.String(), dialect.SendMessage.String(), outcome, code))
	}
	for _, c := range []struct {
		outcome, code string
		want          float64
	}{{outcomeOK, "0", 2}, {outcomeAgentError, "other", 2}, {outcomeAgentError, "-32001", 1}} {
		if got := count(c.outcome, c.code); got != c.want {
			t.Errorf("outcome %s code %s: %v calls, want %v", c.outcome, c.code, got, c.want)
		}
	}
	// A 0.3 gRPC call reaches the core as 1.0: the front end's marks name
	// the binding and the caller's dialect.
	c := &call{backend: b, binding: dialect.GRPC, caller: dialect.V03}
	c.env.Dialect, c.env.Op = dialect.V10, dialect.SendMessage
	m.observe("echo", c, time.Millisecond)
	if got := testutil.ToFloat64(m.requests.WithLabelValues("echo", "grpc", "0.x", "1.0", "send_message", "ok", "0")); got != 1 {
		t.Errorf("grpc 0.x series: %v calls, want 1", got)
	}
	if n := testutil.CollectAndCount(m.requests); n != 4 {
		t.Errorf("%d series, want 4", n)
	}
	// Every call, whatever its outcome, times into the agent's and op's one
	// duration series.
	var d dto.Metric
	if err := m.duration.WithLabelValues("echo", dialect.SendMessage.String()).(prometheus.Metric).Write(&d); err != nil {
		t.Fatal(err)
	}
	if n, sum := d.GetHistogram().GetSampleCount(), d.GetHistogram().GetSampleSum(); n != 6 || sum < 0.0059 || sum > 0.0061 {
		t.Errorf("duration series: %d calls summing %vs, want 6 summing 0.006s", n, sum)
	}
	if n := testutil.CollectAndCount(m.duration); n != 1 {
		t.Errorf("%d duration series, want 1", n)
	}
}

// slowIndex is a task index whose writes take delay: time an event spends
// in the gateway while the index records its state.
type slowIndex struct {
	store.Store
	delay time.Duration
}

func (s slowIndex) Put(ctx context.Context, t store.Task) error {
	time.Sleep(s.delay)
	return s.Store.Put(ctx, t)
}

func (s slowIndex) PutSend(ctx context.Context, t store.Task, key store.SendKey, rec store.SendRecord) error {
	time.Sleep(s.delay)
	return s.Store.PutSend(ctx, t, key, rec)
}

// TestStreamEventRelayTime: every event relayed is timed once, from the
// backend read that brought it to its flush to the caller, so the time
// covers the gateway's own work on it (here the index recording a new
// state) and an event is not charged another's. The backend sends each
// event in its own write only once the caller has read the one before.
func TestStreamEventRelayTime(t *testing.T) {
	const indexDelay = 200 * time.Millisecond
	reg := prometheus.NewRegistry()
	next := make(chan struct{})
	update := func(id, result string) string {
		return `data: {"jsonrpc":"2.0","id":` + id + `,"result":` + result + "}\n\n"
	}
	g := newGatewayOpts(t, scripted(func(w http.ResponseWriter, r *http.Request, id string) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i, ev := range []string{
			working(id), // a new task: recorded
			update(id, `{"kind":"artifact-update","taskId":"t1","contextId":"c1","artifact":{"artifactId":"a1","parts":[{"kind":"text","text":"half"}]}}`),
			update(id, `{"kind":"status-update","taskId":"t1","contextId":"c1","status":{"state":"completed"},"final":true}`), // a new state: recorded
		} {
			if i > 0 {
				select {
				case <-next:
				case <-r.Context().Done():
					return
				}
			}
			sseWrite(w, ev)
		}
	}), dialect.Version03, Options{Metrics: NewMetrics(reg, nil), Tasks: slowIndex{store.NewMemory(store.MemoryConfig{}), indexDelay}})
	c := callers[0]
	s := g.stream("1", c.method(dialect.SendStreamingMessage), c.send("m1", c.text("go"), ""))
	events := 0
	for {
		if _, ok := s.next(); !ok {
			break
		}
		if events++; events < 3 {
			next <- struct{}{}
		}
	}
	if events != 3 {
		t.Fatalf("caller got %d events, want 3", events)
	}
	h := relayHistogram(t, reg, "test")
	if h.GetSampleCount() != 3 {
		t.Fatalf("%d events timed, want the 3 relayed", h.GetSampleCount())
	}
	if min := 2 * indexDelay.Seconds(); h.GetSampleSum() < min {
		t.Errorf("relay times sum to %.3f s: the two events the index recorded spent at least %.3f s in the gateway", h.GetSampleSum(), min)
	}
	var belowDelay uint64
	for _, b := range h.GetBucket() {
		if b.GetUpperBound() < indexDelay.Seconds() {
			belowDelay = b.GetCumulativeCount()
		}
	}
	if belowDelay != 1 {
		t.Errorf("%d events timed under %s, want 1: the artifact update, which the index does not record, is charged no other event's wait", belowDelay, indexDelay)
	}
}

func relayHistogram(t *testing.T, reg *prometheus.Registry, agent string) *dto.Histogram {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "a2a_gateway_stream_event_relay_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			if hasLabels(m, map[string]string{"agent": agent}) {
				return m.GetHistogram()
			}
		}
	}
	t.Fatalf("no stream event relay histogram for agent %q", agent)
	return nil
}

// nodeCountingStore is an index that counts its failures by node.
type nodeCountingStore struct{ store.Store }

func (nodeCountingStore) NodeErrors() map[string]uint64 {
	return map[string]uint64{"10.0.0.1:6379": 3, "10.0.0.2:6379": 0}
}

// An index that counts failures by node has them scraped by node address.
func TestMetricsTaskIndexNodeErrors(t *testing.T) {
	reg := prometheus.NewRegistry()
	tasks := nodeCountingStore{store.NewMemory(store.MemoryConfig{})}
	defer tasks.Close()
	NewMetrics(reg, tasks)
	want := `
# HELP a2a_gateway_task_index_node_errors_total Failures of the task index's backing nodes, by node address (host:port as configured or as Redis named it): connects that failed, connections that broke or timed out.
# TYPE a2a_gateway_task_index_node_errors_total counter
a2a_gateway_task_index_node_errors_total{node="10.0.0.1:6379"} 3
a2a_gateway_task_index_node_errors_total{node="10.0.0.2:6379"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "a2a_gateway_task_index_node_errors_total"); err != nil {
		t.Fatal(err)
	}
	if problems, err := testutil.GatherAndLint(reg); err != nil || len(problems) > 0 {
		t.Fatalf("promlint: %v %v", err, problems)
	}
}

// queueDepthSeries is the push_queue_depth series of reg, by agent.
func queueDepthSeries(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "a2a_gateway_push_queue_depth" {
			continue
		}
		for _, m := range mf.GetMetric() {
			out[m.GetLabel()[0].GetValue()] = m.GetGauge().GetValue()
		}
	}
	return out
}

// TestPushQueueDepthFollowsLiveAgents: an agent of the same name built by a
// reload, refused or not, does not take the running agent's queue out of
// push_queue_depth (both count while the old one drains), and an agent
// whose queue is closed leaves the metric.
func TestPushQueueDepthFollowsLiveAgents(t *testing.T) {
	arrived, release := make(chan struct{}, 1), make(chan struct{})
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-release
	}))
	defer hook.Close()
	defer close(release)
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg, nil)
	cfg := AgentConfig{Name: "helpdesk", PublicURL: "http://gateway.test/", Backend: BackendConfig{URL: "http://127.0.0.1:9/", Dialect: dialect.Version10}}
	allowLoopback(&cfg)
	running := newValidAgent(t, cfg, Options{Metrics: m})
	for _, id := range []string{"t1", "t2"} {
		if err := running.push.queue.Enqueue(push.Delivery{TaskID: id, URL: hook.URL + "/hook", Body: []byte(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	<-arrived
	if got := queueDepthSeries(t, reg); got["helpdesk"] != 2 {
		t.Fatalf("push_queue_depth %v, want helpdesk 2", got)
	}

	refused := newValidAgent(t, cfg, Options{Metrics: m})
	refused.Close()
	if got := queueDepthSeries(t, reg); got["helpdesk"] != 2 {
		t.Errorf("after an agent of the same name was built and closed, push_queue_depth %v, want helpdesk 2: the running agent's queue", got)
	}

	removed := newValidAgent(t, AgentConfig{Name: "billing", PublicURL: "http://gateway.test/", Backend: cfg.Backend}, Options{Metrics: m})
	if _, ok := queueDepthSeries(t, reg)["billing"]; !ok {
		t.Fatal("no push_queue_depth for a new agent")
	}
	removed.Close()
	if got, ok := queueDepthSeries(t, reg)["billing"]; ok {
		t.Errorf("a closed agent is still reported: push_queue_depth{agent=billing} %v", got)
	}
}

// TestAgentSeriesAtZero: an agent's backend error, retry, auth failure and
// open stream series exist at zero from its start, so that rate() and
// increase() see its first failure (a series born at 1 hides it) and
// panels show 0 rather than no data.
func TestAgentSeriesAtZero(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg, nil)
	newGatewayOpts(t, http.NotFoundHandler(), dialect.Version10, Options{Metrics: m}, withAuth(t))
	for name, want := range map[string]int{
		"a2a_gateway_backend_errors_total": len(backendKinds),
		"a2a_gateway_retries_total":        len(retryOutcomes),
		"a2a_gateway_auth_failures_total":  len(auth.Reasons()),
		"a2a_gateway_streams_active":       1,
		"a2a_gateway_card_refreshes_total": 2,
	} {
		if n := testutil.CollectAndCount(reg, name); n != want {
			t.Errorf("%s: %d series at start, want %d", name, n, want)
		}
	}
	if v := testutil.ToFloat64(m.authFailures.WithLabelValues("test", "expired")); v != 0 {
		t.Errorf("auth_failures_total{reason=expired} %v at start", v)
	}
}

// TestCardRefreshesCounted: every read of the backend's card is counted by
// result, a card the gateway refuses (here: not UTF-8) as a failure like an
// unreachable backend, so that an alert can say the published card has
// gone stale while the last good one is still served.
func TestCardRefreshesCounted(t *testing.T) {
	legacy := legacyagent.New(legacyagent.Options{})
	t.Cleanup(legacy.Close)
	var broken atomic.Bool
	back := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if broken.Load() && strings.HasPrefix(r.URL.Path, "/.well-known/") {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte("{\"name\":\"\xff\",\"url\":\"http://b/\",\"protocolVersion\":\"0.2.5\"}"))
			return
		}
		legacy.ServeHTTP(w, r)
	})
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg, nil)
	g := newGatewayOpts(t, back, dialect.Version025, Options{Metrics: m})
	ok, failed := m.cardRefreshes.WithLabelValues("test", cardRefreshSuccess), m.cardRefreshes.WithLabelValues("test", cardRefreshFailure)
	if s, f := testutil.ToFloat64(ok), testutil.ToFloat64(failed); s != 1 || f != 0 {
		t.Fatalf("after the first read: success %v, failure %v; want 1, 0", s, f)
	}
	broken.Store(true)
	if err := g.agent.RefreshCard(context.Background()); err == nil || !strings.Contains(err.Error(), "not valid UTF-8") {
		t.Fatalf("RefreshCard of a card that is not UTF-8: %v", err)
	}
	if s, f := testutil.ToFloat64(ok), testutil.ToFloat64(failed); s != 1 || f != 1 {
		t.Fatalf("after a refused card: success %v, failure %v; want 1, 1", s, f)
	}
	if ready, _ := g.agent.CardStatus(); !ready {
		t.Fatal("the last good card is no longer served")
	}
}
