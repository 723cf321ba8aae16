package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// relayTimeFamily is the gateway's histogram of each stream event's time
// in the gateway: from the backend read that brought it to its flush to
// the caller. Beside the latency the client sees, it tells the gateway's
// own part from the hops around it.
const relayTimeFamily = "a2a_gateway_stream_event_relay_seconds"

// relayBuckets are a histogram's cumulative counts by upper bound
// (seconds), in rising order; the last bound is +Inf.
type relayBuckets struct {
	le    []float64
	count []uint64
}

// scrapeRelayTime reads the relay time histogram of agent from a
// gateway's admin listener.
func scrapeRelayTime(admin, agent string) (relayBuckets, error) {
	client := &http.Client{Timeout: 5 * time.Second}
	res, err := client.Get("http://" + admin + "/metrics")
	if err != nil {
		return relayBuckets{}, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return relayBuckets{}, fmt.Errorf("GET /metrics: HTTP %d", res.StatusCode)
	}
	return parseRelayTime(res.Body, agent)
}

// parseRelayTime reads the bucket lines of the relay time histogram of
// agent from the Prometheus text format.
func parseRelayTime(r io.Reader, agent string) (relayBuckets, error) {
	var b relayBuckets
	prefix := relayTimeFamily + "_bucket{"
	agentLabel := `agent="` + agent + `"`
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		labels, value, ok := strings.Cut(line[len(prefix):], "} ")
		if !ok || !slices.Contains(strings.Split(labels, ","), agentLabel) {
			continue
		}
		le, err := labelValue(labels, "le")
		if err != nil {
			return b, fmt.Errorf("%s: %v", line, err)
		}
		bound, err := strconv.ParseFloat(le, 64)
		if err != nil {
			return b, fmt.Errorf("%s: le: %v", line, err)
		}
		n, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return b, fmt.Errorf("%s: count: %v", line, err)
		}
		b.le, b.count = append(b.le, bound), append(b.count, uint64(n))
	}
	if err := sc.Err(); err != nil {
		return b, err
	}
	if len(b.le) == 0 {
		// A gateway that has relayed nothing yet has no series: zero.
		return b, nil
	}
	if !math.IsInf(b.le[len(b.le)-1], 1) || !slices.IsSorted(b.le) {
		return b, fmt.Errorf("the %s histogram of agent %q has no +Inf bucket or unsorted bounds", relayTimeFamily, agent)
	}
	return b, nil
}

func labelValue(labels, name string) (string, error) {
	for _, l := range strings.Split(labels, ",") {
		if v, ok := strings.CutPrefix(l, name+`="`); ok {
			return strings.TrimSuffix(v, `"`), nil
		}
	}
	return "", fmt.Errorf("no %s label", name)
}

// since is the histogram of the events observed after before.
func (b relayBuckets) since(before relayBuckets) (relayBuckets, error) {
	if len(b.le) == 0 {
		return relayBuckets{}, fmt.Errorf("the gateway has no %s histogram (a build older than the metric?)", relayTimeFamily)
	}
	if len(before.le) == 0 {
		return b, nil
	}
	if !slices.Equal(b.le, before.le) {
		return relayBuckets{}, fmt.Errorf("the histogram's buckets changed between scrapes")
	}
	d := relayBuckets{le: b.le, count: make([]uint64, len(b.count))}
	for i := range b.count {
		d.count[i] = b.count[i] - before.count[i]
	}
	return d, nil
}

func (b relayBuckets) total() uint64 { return b.count[len(b.count)-1] }

// quantileBound is the upper bound of the bucket that holds quantile q: the
// quantile is at most that (+Inf when it lies above every finite bound).
func (b relayBuckets) quantileBound(q float64) float64 {
	want := uint64(math.Ceil(q * float64(b.total())))
	for i, c := range b.count {
		if c >= want {
			return b.le[i]
		}
	}
	return math.Inf(1)
}

// shareWithin is the fraction of the events observed within bound seconds,
// bound being one of the bucket bounds.
func (b relayBuckets) shareWithin(bound float64) float64 {
	i := slices.Index(b.le, bound)
	if i < 0 || b.total() == 0 {
		return math.NaN()
	}
	return float64(b.count[i]) / float64(b.total())
}

// relayBudget is the latency budget per stream event, a bucket bound of
// the gateway's histogram.
const relayBudget = 100e-6

// setRelayTime fills the row's relay time figures from the histogram read
// after the warm-up (before, or the error reading it) and the one the
// gateway at admin has now.
func (s *streamRow) setRelayTime(before relayBuckets, beforeErr error, admin string) error {
	if beforeErr != nil {
		return beforeErr
	}
	after, err := scrapeRelayTime(admin, benchAgent)
	if err != nil {
		return err
	}
	d, err := after.since(before)
	if err != nil || d.total() == 0 {
		return err
	}
	bound := func(q float64) float64 {
		if b := d.quantileBound(q); !math.IsInf(b, 1) {
			return b * 1e6
		}
		return -1
	}
	s.RelayEvents = d.total()
	s.RelayP50UsMax, s.RelayP99UsMax = bound(0.50), bound(0.99)
	s.RelayWithin100UsPct = 100 * d.shareWithin(relayBudget)
	return nil
}

// relayUs spells a relay time bound: at most that many µs.
func relayUs(bound float64) string {
	if bound < 0 {
		return "> 5 s"
	}
	return fmt.Sprintf("≤ %.0f", bound)
}

// relayTimeNote is the row's relay time for the progress log, or "".
func (s streamRow) relayTimeNote() string {
	if s.RelayEvents == 0 {
		return ""
	}
	return fmt.Sprintf("  in the gateway: p50 %s µs, p99 %s µs, %.1f%% within 100 µs", relayUs(s.RelayP50UsMax), relayUs(s.RelayP99UsMax), s.RelayWithin100UsPct)
}
