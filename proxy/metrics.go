package proxy

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/a2agate/gateway/auth"
	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/push"
	"github.com/a2agate/gateway/store"
)

// Metrics are the gateway's Prometheus metrics. Every label value comes from
// a closed set (agent names from the config, dialects, operations, error
// reasons): never a task id, a raw method string or a principal.
type Metrics struct {
	requests       *prometheus.CounterVec
	duration       *prometheus.HistogramVec
	translation    *prometheus.CounterVec
	streamsActive  *prometheus.GaugeVec
	streamEvents   *prometheus.CounterVec
	eventRelay     *prometheus.HistogramVec
	authFailures   *prometheus.CounterVec
	backendErrors  *prometheus.CounterVec
	storeErrors    *prometheus.CounterVec
	retries        *prometheus.CounterVec
	cardRefreshes  *prometheus.CounterVec
	taskIndexSize  prometheus.GaugeFunc
	indexSizeStore store.Store

	pushReceivedTotal *prometheus.CounterVec
	pushDeliveries    *prometheus.CounterVec
	pushAttempts      *prometheus.HistogramVec
	pushDuration      *prometheus.HistogramVec
	pushQueues        *queueDepths

	// callSeries remembers the requests counter and duration histogram of
	// each label set seen: one map lookup per call instead of
	// WithLabelValues checking and hashing eight label values (1.5% of the
	// gateway's CPU under load).
	callSeries sync.Map // callLabels → callSeries
}

type callSeries struct {
	requests prometheus.Counter
	duration prometheus.Observer
}

// callLabels are the requests counter's labels, as they are before being
// spelled out. code is -1 for a code outside A2A's set (the "other" label).
type callLabels struct {
	agent, outcome  string
	binding         dialect.Binding
	caller, backend dialect.ID
	op              dialect.Op
	code            int
}

// Outcomes of a call, the values of the outcome label.
const (
	outcomeOK              = "ok"
	outcomeCallerError     = "caller_error"    // the request was refused as invalid or not allowed
	outcomeUnauthenticated = "unauthenticated" // no valid token
	outcomeAgentError      = "agent_error"     // the backend answered a JSON-RPC error
	outcomeBackendFailure  = "backend_failure" // the backend failed: unreachable, timed out, invalid reply
	outcomeGatewayError    = "gateway_error"   // the gateway itself could not serve (task index down)
	outcomeCallerGone      = "caller_gone"     // the caller went away (closed its connection, cancelled) before its answer
	outcomeCallerLimited   = "caller_limited"  // the caller had agents[].max_calls_per_caller calls in flight already
)

// Backend failure kinds, the values of the kind label.
const (
	backendUnreachable   = "unreachable"
	backendTimeout       = "timeout"
	backendHTTPStatus    = "http_status"
	backendInvalidReply  = "invalid_reply"
	backendStreamDropped = "stream_dropped"
	backendStreamIdle    = "stream_idle"
	backendStreamCut     = "stream_ended_early"
)

// NewMetrics registers the gateway's metrics with reg. tasks, when not nil,
// is the index whose size the task index gauge reports.
func NewMetrics(reg prometheus.Registerer, tasks store.Store) *Metrics {
	const ns = "a2a_gateway"
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: name, Help: help}, labels)
	}
	histogram := func(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Name: name, Help: help, Buckets: buckets}, labels)
	}
	m := &Metrics{
		requests: counter("requests_total",
			"Calls answered, by published agent, binding the caller used (jsonrpc, http_json, grpc), caller and backend dialect, operation, outcome and JSON-RPC error code (0 on success).",
			"agent", "binding", "caller_dialect", "backend_dialect", "op", "outcome", "code"),
		duration: histogram("request_duration_seconds",
			"Time from request to the last byte of the answer (whole stream for streaming calls), by published agent and operation.",
			[]float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300},
			"agent", "op"),
		translation: counter("translation_errors_total",
			"Payloads that could not be translated, by direction (request, response, event) and reason.",
			"direction", "reason"),
		streamsActive: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: ns, Name: "streams_active",
			Help: "Event streams open now, by published agent.",
		}, []string{"agent"}),
		streamEvents: counter("stream_events_total",
			"Stream events relayed to callers, by published agent and caller dialect.",
			"agent", "caller_dialect"),
		eventRelay: histogram("stream_event_relay_seconds",
			"Time each stream event spent in the gateway, from the backend read that brought it to its flush to the caller (for an event held for its final flag, from the last read before its release), by published agent.",
			// Fine below a millisecond, where an event's own cost lies; a
			// boundary at 100 µs, the latency budget per event.
			[]float64{5e-6, 10e-6, 20e-6, 30e-6, 50e-6, 75e-6, 100e-6, 150e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 10e-3, .1, 1, 5},
			"agent"),
		authFailures: counter("auth_failures_total",
			"Calls refused for a missing or invalid token, by published agent and reason.",
			"agent", "reason"),
		backendErrors: counter("backend_errors_total",
			"Backend failures, by published agent and kind (unreachable, timeout, http_status, invalid_reply, stream_dropped, stream_idle, stream_ended_early).",
			"agent", "kind"),
		storeErrors: counter("task_index_errors_total",
			"Task index operations that failed, by operation (read, write, list).",
			"operation"),
		retries: counter("retries_total",
			"Sends recognised as retries of an earlier one, by published agent and outcome (deduplicated, joined_in_flight, resent_not_accepted, refused_key_reuse).",
			"agent", "outcome"),
		cardRefreshes: counter("card_refreshes_total",
			"Reads of the backend's agent card, by published agent and result (success; failure: unreachable, or a card refused as invalid, while the last good card stays in service).",
			"agent", "result"),
	}
	m.indexSizeStore = tasks
	m.taskIndexSize = prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace: ns, Name: "task_index_tasks",
		Help: "Tasks in the task index (-1 when the index cannot be reached).",
	}, m.indexSize)
	for _, op := range []string{"read", "write", "list"} {
		m.storeErrors.WithLabelValues(op) // present at zero before the first failure
	}
	m.pushReceivedTotal = counter("push_received_total",
		"Push deliveries the backends posted to the relay, by published agent and outcome (accepted, refused, too_large, invalid, queue_full, unavailable, after_final).",
		"agent", "outcome")
	m.pushDeliveries = counter("push_deliveries_total",
		"Push deliveries to the callers' webhooks, by published agent and outcome (delivered, rejected, failed, dropped_queue_full, refused_policy, abandoned_shutdown).",
		"agent", "outcome")
	m.pushAttempts = histogram("push_delivery_attempts",
		"POSTs each push delivery took (0 when none was made), by published agent.",
		[]float64{0, 1, 2, 3, 5, 8, 13},
		"agent")
	m.pushDuration = histogram("push_delivery_duration_seconds",
		"Time from a push delivery's arrival in the queue to its outcome, retries and waits included, by published agent.",
		[]float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300},
		"agent")
	m.pushQueues = &queueDepths{desc: prometheus.NewDesc(ns+"_push_queue_depth",
		"Push deliveries waiting or in flight, by published agent.", []string{"agent"}, nil)}
	reg.MustRegister(m.requests, m.duration, m.translation, m.streamsActive, m.streamEvents, m.eventRelay,
		m.authFailures, m.backendErrors, m.storeErrors, m.retries, m.cardRefreshes, m.taskIndexSize,
		m.pushReceivedTotal, m.pushDeliveries, m.pushAttempts, m.pushDuration, m.pushQueues)
	if nodes, ok := tasks.(store.NodeErrorCounter); ok {
		reg.MustRegister(&nodeErrors{nodes: nodes, desc: prometheus.NewDesc(ns+"_task_index_node_errors_total",
			"Failures of the task index's backing nodes, by node address (host:port as configured or as Redis named it): connects that failed, connections that broke or timed out.",
			[]string{"node"}, nil)})
	}
	return m
}

// backendKinds lists the kind label's values.
var backendKinds = []string{backendUnreachable, backendTimeout, backendHTTPStatus, backendInvalidReply, backendStreamDropped, backendStreamIdle, backendStreamCut}

// retryOutcomes lists the retries counter's outcome label values.
var retryOutcomes = []string{retryDeduplicated, retryJoinedInFlight, retryResentNotAccepted, retryRefusedKeyReuse}

// agentSeries makes agent's failure, retry and stream series at zero: a
// series born at its first failure holds 1 at its first sample, which
// rate() and increase() cannot tell from a count that was always there,
// so the alert on it would miss that failure, and a panel shows no data
// rather than none failed. authOn adds the auth failure reasons.
func (m *Metrics) agentSeries(agent string, authOn bool) {
	if m == nil {
		return
	}
	for _, k := range backendKinds {
		m.backendErrors.WithLabelValues(agent, k)
	}
	for _, o := range retryOutcomes {
		m.retries.WithLabelValues(agent, o)
	}
	m.cardRefreshes.WithLabelValues(agent, cardRefreshSuccess)
	m.cardRefreshes.WithLabelValues(agent, cardRefreshFailure)
	if authOn {
		for _, r := range auth.Reasons() {
			m.authFailures.WithLabelValues(agent, string(r))
		}
	}
	m.streamsActive.WithLabelValues(agent)
}

// nodeErrors reports the task index's failures by node when scraped.
type nodeErrors struct {
	desc  *prometheus.Desc
	nodes store.NodeErrorCounter
}

func (n *nodeErrors) Describe(ch chan<- *prometheus.Desc) { ch <- n.desc }

func (n *nodeErrors) Collect(ch chan<- prometheus.Metric) {
	for node, count := range n.nodes.NodeErrors() {
		ch <- prometheus.MustNewConstMetric(n.desc, prometheus.CounterValue, float64(count), node)
	}
}

func (m *Metrics) indexSize() float64 {
	if m.indexSizeStore == nil {
		return 0
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	n, err := m.indexSizeStore.Len(ctx)
	if err != nil {
		return -1
	}
	return float64(n)
}

// observe records one finished call, which took elapsed.
func (m *Metrics) observe(agent string, c *call, elapsed time.Duration) {
	if m == nil {
		return
	}
	outcome := c.outcome
	if outcome == "" {
		outcome = outcomeOK
	}
	caller := c.callerDialect()
	key := callLabels{agent: agent, outcome: outcome, binding: c.binding, caller: caller, backend: c.backend.dialect, op: c.env.Op, code: closedCode(c.code)}
	series, ok := m.callSeries.Load(key)
	if !ok {
		series, _ = m.callSeries.LoadOrStore(key, callSeries{
			requests: m.requests.WithLabelValues(agent, c.binding.String(), caller.String(),
				c.backend.dialect.String(), c.env.Op.String(), outcome, codeLabel(key.code)),
			duration: m.duration.WithLabelValues(agent, c.env.Op.String()),
		})
	}
	s := series.(callSeries)
	s.requests.Inc()
	s.duration.Observe(elapsed.Seconds())
	if c.events > 0 {
		m.streamEvents.WithLabelValues(agent, caller.String()).Add(float64(c.events))
	}
}

// callerDialect is the dialect c's caller spoke: the one a front end
// recorded when it made the call in another (a 0.3 REST or gRPC call
// reaches the core as 1.0), else the request's.
func (c *call) callerDialect() dialect.ID {
	if c.caller != 0 {
		return c.caller
	}
	return c.env.Dialect
}

// closedCode keeps the code label a closed set: 0, A2A's codes, else -1
// ("other").
func closedCode(code int) int {
	if _, known := dialect.ErrorByCode(code); !known && code != 0 {
		return -1
	}
	return code
}

// codeLabel spells a code closedCode returned.
func codeLabel(code int) string {
	if code == -1 {
		return "other"
	}
	return strconv.Itoa(code)
}

func (m *Metrics) translationError(direction string, kind dialect.ErrorKind) {
	if m != nil {
		m.translation.WithLabelValues(direction, kind.String()).Inc()
	}
}

func (m *Metrics) backendError(agent, kind string) {
	if m != nil {
		m.backendErrors.WithLabelValues(agent, kind).Inc()
	}
}

// Results of a card refresh, the card_refreshes_total result label.
const (
	cardRefreshSuccess = "success"
	cardRefreshFailure = "failure"
)

func (m *Metrics) cardRefresh(agent string, err error) {
	if m == nil {
		return
	}
	result := cardRefreshSuccess
	if err != nil {
		result = cardRefreshFailure
	}
	m.cardRefreshes.WithLabelValues(agent, result).Inc()
}

func (m *Metrics) authFailure(agent, reason string) {
	if m != nil {
		m.authFailures.WithLabelValues(agent, reason).Inc()
	}
}

func (m *Metrics) storeError(op string) {
	if m != nil {
		m.storeErrors.WithLabelValues(op).Inc()
	}
}

// retry counts a send recognised as a retry, by outcome.
func (m *Metrics) retry(agent, outcome string) {
	if m != nil {
		m.retries.WithLabelValues(agent, outcome).Inc()
	}
}

// eventRelayTime is where a stream of agent records each event's time in
// the gateway, or nil without metrics.
func (m *Metrics) eventRelayTime(agent string) prometheus.Observer {
	if m == nil {
		return nil
	}
	return m.eventRelay.WithLabelValues(agent)
}

func (m *Metrics) streamOpened(agent string) func() {
	if m == nil {
		return func() {}
	}
	g := m.streamsActive.WithLabelValues(agent)
	g.Inc()
	return g.Dec
}

// queueDepths reports each agent's push queue depth when scraped: the sum
// of the queues of that name, since one config's agent and its successor
// after a reload both hold deliveries while the old one drains.
type queueDepths struct {
	desc   *prometheus.Desc
	queues sync.Map // *queueDepth → struct{}
}

// queueDepth is one agent's queue, registered until the queue is closed.
type queueDepth struct {
	agent string
	depth func() int
}

func (q *queueDepths) Describe(ch chan<- *prometheus.Desc) { ch <- q.desc }

func (q *queueDepths) Collect(ch chan<- prometheus.Metric) {
	sums := map[string]int{}
	q.queues.Range(func(k, _ any) bool {
		d := k.(*queueDepth)
		sums[d.agent] += d.depth()
		return true
	})
	for agent, n := range sums {
		ch <- prometheus.MustNewConstMetric(q.desc, prometheus.GaugeValue, float64(n), agent)
	}
}

// pushQueue registers agent's push queue depth, and the agent's push series
// at zero, until the returned func is called once the queue is closed: an
// agent a refused reload built, or one a reload removed, then leaves the
// metric and its queue to the garbage collector.
func (m *Metrics) pushQueue(agent string, depth func() int) (unregister func()) {
	if m == nil {
		return func() {}
	}
	d := &queueDepth{agent: agent, depth: depth}
	m.pushQueues.queues.Store(d, struct{}{})
	for _, o := range receivedOutcomes {
		m.pushReceivedTotal.WithLabelValues(agent, o)
	}
	for _, o := range push.Outcomes {
		m.pushDeliveries.WithLabelValues(agent, string(o))
	}
	m.pushAttempts.WithLabelValues(agent)
	m.pushDuration.WithLabelValues(agent)
	return func() { m.pushQueues.queues.Delete(d) }
}

func (m *Metrics) pushReceived(agent, outcome string) {
	if m != nil {
		m.pushReceivedTotal.WithLabelValues(agent, outcome).Inc()
	}
}

func (m *Metrics) pushDelivered(agent string, r push.Result) {
	if m == nil {
		return
	}
	m.pushDeliveries.WithLabelValues(agent, string(r.Outcome)).Inc()
	m.pushAttempts.WithLabelValues(agent).Observe(float64(r.Attempts))
	m.pushDuration.WithLabelValues(agent).Observe(r.Latency.Seconds())
}
