package reliability

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/testfiles"
	"github.com/a2agate/gateway/internal/testredis"
)

// The safe-retry tests run the gateway binary in front of the two real
// agents, with HS256 auth on both (a principal's keys are its own), and
// call it in both dialects. A caller "times out" or "disconnects" by
// ending its own request; what the backend saw is counted by the text of
// each message, unique per test and target.

// retriesGatewayConfig is the agents' config with auth, the store section
// given, and retries.window when not "".
func retriesGatewayConfig(t *testing.T, be *backends, store, window string) string {
	t.Helper()
	secret := testfiles.Write(t, "hmac", []byte(clusterSecret+"\n"))
	extra := fmt.Sprintf("    auth:\n      issuer: %q\n      algorithms: [HS256]\n      hmac_secret_file: %q\n", clusterIssuer, secret)
	if window != "" {
		extra += "    retries:\n      window: " + window + "\n"
	}
	cfg := be.config()
	cfg.store = store
	const skills = "    skills:\n      default: work\n"
	return strings.ReplaceAll(cfg.yaml(), skills, skills+extra)
}

// principal is a caller with a token for both agents.
type principal struct {
	legacy, modern *client
}

func newPrincipal(t *testing.T, g *gatewayProc, sub string) principal {
	t.Helper()
	token := func(path string) string { return "Bearer " + clusterToken(t, sub, path) }
	cl := newClient(t, g.url, 16)
	return principal{legacy: cl.with("Authorization", token(legacyPath)), modern: cl.with("Authorization", token(modernPath))}
}

// to is the principal's client for tg's agent.
func (p principal) to(tg target) *client {
	if tg.path == legacyPath {
		return p.legacy
	}
	return p.modern
}

// times is how many messages with this text reached a backend.
func (rec *recorder) times(text string) int {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return rec.texts[text]
}

// send is a blocking send of text with message id msgID.
func send(ctx context.Context, cl *client, tg target, msgID, text string) (gjson.Result, error) {
	return cl.call(ctx, tg, "1", dialect.SendMessage, tg.c.sendParams(msgID, text))
}

// givenUp is a blocking send whose caller ends it: at its 1 s timeout, or
// (disconnect) once the backend has the message.
func givenUp(t *testing.T, be *backends, cl *client, tg target, msgID, text string, disconnect bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	if disconnect {
		ctx, cancel = context.WithCancel(context.Background())
	}
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := send(ctx, cl, tg, msgID, text)
		errc <- err
	}()
	be.seen.awaitWaits(t, 1, 30*time.Second)
	if disconnect {
		cancel()
	}
	if err := <-errc; !errors.Is(err, errTransport) {
		t.Fatalf("%s: the given-up send was answered: %v", tg, err)
	}
}

// wantTask checks a send's answer is the completed task answering text
// and returns its id.
func wantTask(t *testing.T, tg target, r gjson.Result, err error, text string) string {
	t.Helper()
	if err == nil {
		var task gjson.Result
		if task, err = completedTask(tg.c, r, text); err == nil {
			return task.Get("id").Str
		}
	}
	t.Fatalf("%s %q: %v", tg, text, err)
	return ""
}

func wantOnce(t *testing.T, be *backends, text string) {
	t.Helper()
	if n := be.seen.times(text); n != 1 {
		t.Errorf("the backend saw %q %d times, want once", text, n)
	}
}

// TestRetriesThroughTheBinary: a blocking send to a held task whose caller
// times out after 1 s, retried with the same messageId; the same with an
// Idempotency-Key and a fresh messageId; a retry after the caller
// disconnected; two concurrent callers of one key: each gets the completed
// task and the backend saw the message once. A direct message's retry
// gets the same message; a key reused for another message is refused
// -32602; another principal's identical key is its own send.
func TestRetriesThroughTheBinary(t *testing.T) {
	be := startBackends(t)
	g := startGateway(t, retriesGatewayConfig(t, be, "", ""))
	alice, bob := newPrincipal(t, g, "alice"), newPrincipal(t, g, "bob")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	type joined struct {
		ids  [2]string
		errs [2]error
		res  [2]gjson.Result
	}
	joins := make([]joined, len(targets))
	var wg sync.WaitGroup
	for i, tg := range targets {
		cl := alice.to(tg)
		givenUp(t, be, cl, tg, "timeout-"+tg.String(), "wait timeout "+tg.String(), false)
		givenUp(t, be, cl.with("Idempotency-Key", "key-"+tg.String()), tg, "idem-first-"+tg.String(), "wait idem "+tg.String(), false)
		givenUp(t, be, cl, tg, "gone-"+tg.String(), "wait gone "+tg.String(), true)

		before, err := g.metric("a2a_gateway_retries_total", `outcome="joined_in_flight"`)
		if err != nil {
			t.Fatal(err)
		}
		for j := range 2 {
			wg.Go(func() {
				joins[i].res[j], joins[i].errs[j] = send(ctx, cl, tg, "join-"+tg.String(), "wait join "+tg.String())
			})
			if j == 0 {
				be.seen.awaitWaits(t, 1, 30*time.Second)
			}
		}
		eventually(t, 30*time.Second, "the second caller to join the first send", func() bool {
			n, err := g.metric("a2a_gateway_retries_total", `outcome="joined_in_flight"`)
			return err == nil && n == before+1
		})
	}
	be.release()
	wg.Wait()
	for i, tg := range targets {
		cl := alice.to(tg)
		r, err := send(ctx, cl, tg, "timeout-"+tg.String(), "wait timeout "+tg.String())
		first := wantTask(t, tg, r, err, "wait timeout "+tg.String())
		wantOnce(t, be, "wait timeout "+tg.String())
		r, err = send(ctx, cl.with("Idempotency-Key", "key-"+tg.String()), tg, "idem-again-"+tg.String(), "wait idem "+tg.String())
		wantTask(t, tg, r, err, "wait idem "+tg.String())
		wantOnce(t, be, "wait idem "+tg.String())
		r, err = send(ctx, cl, tg, "gone-"+tg.String(), "wait gone "+tg.String())
		wantTask(t, tg, r, err, "wait gone "+tg.String())
		wantOnce(t, be, "wait gone "+tg.String())
		a := wantTask(t, tg, joins[i].res[0], joins[i].errs[0], "wait join "+tg.String())
		if b := wantTask(t, tg, joins[i].res[1], joins[i].errs[1], "wait join "+tg.String()); a != b {
			t.Errorf("%s: two callers of one key got tasks %s and %s", tg, a, b)
		}
		wantOnce(t, be, "wait join "+tg.String())

		question := "what is the time at " + tg.String() + "?"
		m1, err1 := send(ctx, cl, tg, "ask-"+tg.String(), question)
		m2, err2 := send(ctx, cl, tg, "ask-"+tg.String(), question)
		if err1 != nil || err2 != nil || !m1.Get("result").Exists() || m1.Get("result").Raw != m2.Get("result").Raw {
			t.Errorf("%s: a direct message's retry: %v %v\n%s\n%s", tg, err1, err2, m1.Raw, m2.Raw)
		}
		wantOnce(t, be, question)

		r, err = send(ctx, cl, tg, "timeout-"+tg.String(), "something else "+tg.String())
		if e, ok := errors.AsType[rpcError](asRPCErrorOf(tg, r, err)); !ok || e.code != -32602 || !strings.Contains(e.message, "already used for another message") {
			t.Errorf("%s: a reused key: %v %s", tg, err, r.Raw)
		}
		if be.seen.received("something else " + tg.String()) {
			t.Errorf("%s: the reused key's message reached the backend", tg)
		}

		r, err = send(ctx, bob.to(tg), tg, "timeout-"+tg.String(), "wait timeout "+tg.String())
		if theirs := wantTask(t, tg, r, err, "wait timeout "+tg.String()); theirs == first || strings.Contains(r.Raw, first) {
			t.Errorf("%s: bob's send with alice's key learned her task: %s", tg, r.Raw)
		}
		if n := be.seen.times("wait timeout " + tg.String()); n != 2 {
			t.Errorf("%s: the backend saw %d sends of the text alice and bob sent, want 2", tg, n)
		}
	}
}

// asRPCErrorOf is the JSON-RPC error a call answered, as an error.
func asRPCErrorOf(tg target, r gjson.Result, err error) error {
	if err != nil {
		return err
	}
	e, err := asRPCError(tg.c, r)
	if err != nil {
		return err
	}
	return e
}

// TestRetryAfterWindowThroughTheBinary: past retries.window the same send
// is new work.
func TestRetryAfterWindowThroughTheBinary(t *testing.T) {
	be := startBackends(t)
	g := startGateway(t, retriesGatewayConfig(t, be, "", "1s"))
	alice := newPrincipal(t, g, "alice")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, tg := range targets {
		text := "windowed " + tg.String()
		r, err := send(ctx, alice.to(tg), tg, "w-"+tg.String(), text)
		first := wantTask(t, tg, r, err, text)
		var last string
		// Every send within the window is the first one's retry.
		eventually(t, 20*time.Second, "the window to pass", func() bool {
			r, err := send(ctx, alice.to(tg), tg, "w-"+tg.String(), text)
			last = wantTask(t, tg, r, err, text)
			return be.seen.times(text) == 2
		})
		if last == first {
			t.Errorf("%s: the send after the window got the first task", tg)
		}
	}
}

// TestRetriesAcrossReplicasThroughTheBinary: three gateways on one Redis
// index. A retry reaching another replica waits for the first send there
// and gets its task. The replica of a streaming send is killed after the
// first event: the retry on another subscribes to the task and follows it
// to its end. The replica of a blocking send is killed before the answer:
// once its claim lapses the retry is told the gateway cannot know whether
// the agent took the work, and nothing is sent again.
func TestRetriesAcrossReplicasThroughTheBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out a claim's 15 s lease: skipped with -short")
	}
	be := startBackends(t)
	store := fmt.Sprintf("store:\n  type: redis\n  redis:\n    address: %q\n    key_prefix: %q\n    ttl: 10m\n",
		testredis.Addr(t), fmt.Sprintf("a2agw-retries-%d:", time.Now().UnixNano()))
	cfg := retriesGatewayConfig(t, be, store, "")
	g1, g2, doomed := startGateway(t, cfg), startGateway(t, cfg), startGateway(t, cfg)
	on1, on2, onDoomed := newPrincipal(t, g1, "alice"), newPrincipal(t, g2, "alice"), newPrincipal(t, doomed, "alice")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	var streams []*stream
	for _, tg := range targets {
		givenUp(t, be, on1.to(tg), tg, "other-"+tg.String(), "wait other "+tg.String(), true)
		givenUp(t, be, onDoomed.to(tg), tg, "killed-send-"+tg.String(), "wait killed send "+tg.String(), true)
		s, err := onDoomed.to(tg).openStream(ctx, tg, "1", dialect.SendStreamingMessage, tg.c.sendParams("killed-stream-"+tg.String(), "wait killed stream "+tg.String()))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.next(); err != nil {
			t.Fatalf("%s: the first event: %v", tg, err)
		}
		be.seen.awaitWaits(t, 1, 30*time.Second) // the stream's message
		streams = append(streams, s)
	}
	if err := doomed.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if _, err := doomed.wait(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	for _, s := range streams {
		s.close()
	}

	// Opened before the release: the retries subscribe to the working tasks.
	var retried []*stream
	for _, tg := range targets {
		s, err := on2.to(tg).openStream(ctx, tg, "1", dialect.SendStreamingMessage, tg.c.sendParams("killed-stream-"+tg.String(), "wait killed stream "+tg.String()))
		if err != nil {
			t.Fatal(err)
		}
		retried = append(retried, s)
	}
	lapsed := make([]error, len(targets))
	var wg sync.WaitGroup
	for i, tg := range targets {
		wg.Go(func() {
			r, err := send(ctx, on2.to(tg), tg, "killed-send-"+tg.String(), "wait killed send "+tg.String())
			lapsed[i] = asRPCErrorOf(tg, r, err)
		})
	}
	be.release()
	for i, tg := range targets {
		if _, err := completedStream(tg.c, retried[i], "wait killed stream "+tg.String()); err != nil {
			t.Errorf("%s: the streaming retry on another replica: %v", tg, err)
		}
		retried[i].close()
		wantOnce(t, be, "wait killed stream "+tg.String())
		r, err := send(ctx, on2.to(tg), tg, "other-"+tg.String(), "wait other "+tg.String())
		wantTask(t, tg, r, err, "wait other "+tg.String())
		wantOnce(t, be, "wait other "+tg.String())
	}
	wg.Wait()
	for i, tg := range targets {
		if e, ok := errors.AsType[rpcError](lapsed[i]); !ok || e.code != -32603 || !strings.Contains(e.message, "cannot tell whether the agent took the work") {
			t.Errorf("%s: the retry of the killed replica's send: %v", tg, lapsed[i])
		}
		wantOnce(t, be, "wait killed send "+tg.String())
	}
}

// TestBlockingViaStreamThroughTheBinary: with blocking_via_stream on, a
// blocking send to a held task whose caller times out after 1 s is
// retried with the same messageId while the task still runs: the retry
// knows the task from the stream's first event (counted deduplicated, not
// joined in flight), and once the task completes it gets it; the backend
// saw the message once.
func TestBlockingViaStreamThroughTheBinary(t *testing.T) {
	be := startBackends(t)
	cfg := strings.ReplaceAll(retriesGatewayConfig(t, be, "", ""), "      dialect: ", "      blocking_via_stream: true\n      dialect: ")
	g := startGateway(t, cfg)
	alice := newPrincipal(t, g, "alice")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	metric := func(outcome string) float64 {
		n, err := g.metric("a2a_gateway_retries_total", `outcome="`+outcome+`"`)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	type answer struct {
		r   gjson.Result
		err error
	}
	answers := make([]chan answer, len(targets))
	for i, tg := range targets {
		cl, text := alice.to(tg), "wait via stream "+tg.String()
		givenUp(t, be, cl, tg, "vs-"+tg.String(), text, false)
		dedup, joined := metric(retryDeduplicated), metric(retryJoinedInFlight)
		answers[i] = make(chan answer, 1)
		go func() {
			r, err := send(ctx, cl, tg, "vs-"+tg.String(), text)
			answers[i] <- answer{r, err}
		}()
		eventually(t, 30*time.Second, "the retry to find the running send's task", func() bool { return metric(retryDeduplicated) == dedup+1 })
		if n := metric(retryJoinedInFlight); n != joined {
			t.Errorf("%s: the retry joined the first send in flight: it did not learn the task from the stream", tg)
		}
	}
	be.release()
	for i, tg := range targets {
		a := <-answers[i]
		wantTask(t, tg, a.r, a.err, "wait via stream "+tg.String())
		wantOnce(t, be, "wait via stream "+tg.String())
	}
}

// The retries counter's outcomes, as the gateway labels them.
const (
	retryDeduplicated   = "deduplicated"
	retryJoinedInFlight = "joined_in_flight"
)
