package reliability

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/dialect"
)

// startForShutdown starts the backends and a gateway that lets calls run
// for timeout after a SIGTERM, for a test that sends one.
func startForShutdown(t *testing.T, timeout time.Duration) (*backends, *gatewayProc) {
	t.Helper()
	be := startBackends(t)
	cfg := be.config()
	cfg.shutdownTimeout = timeout
	return be, startGateway(t, cfg.yaml())
}

// TestShutdownUnderLoad sends SIGTERM while held sends and streams and a
// load of short calls are in flight. The gateway stops accepting at once,
// answers every call it accepted (held sends get their completed task,
// held streams their last event and a clean end once the backends finish
// them), and exits 0 within its shutdown timeout. A call it never accepted
// gets no answer at all and never reached a backend.
func TestShutdownUnderLoad(t *testing.T) {
	const shutdownTimeout = 30 * time.Second
	f := newFault(t, "SIGTERM with sends and streams in flight")
	be, g := startForShutdown(t, shutdownTimeout)
	heldClient := newClient(t, g.url, 64)
	held := startHeld(t, heldClient, be, 2, "shutdown")
	loadClient := newClient(t, g.url, 8)
	l := startLoad(t, loadClient, loadOptions{workers: 8, prefix: "shutdown", stopOnNoAnswer: true, warm: 40})

	sigterm := time.Now()
	g.signal(syscall.SIGTERM)
	if _, err := g.log.waitFor(10*time.Second, g.exited, func(l gjson.Result) bool {
		return strings.HasPrefix(l.Get("msg").Str, "shutting down")
	}); err != nil {
		t.Fatalf("no shutdown in the log: %v\n%s", err, g.log.text())
	}
	addr := strings.TrimPrefix(g.url, "http://")
	eventually(t, 10*time.Second, "the gateway to refuse new connections", func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err != nil
	})
	if !g.running() {
		t.Fatalf("the gateway exited with calls in flight\n%s", g.log.text())
	}
	f.saw("new connections refused after SIGTERM")

	be.release()
	sends, streams := checkHeld(t, held.wait())
	f.saw("%d/%d held sends got their completed task, %d/%d held streams their last event and a clean end", sends, 2*len(targets), streams, 2*len(targets))
	code, err := g.wait(shutdownTimeout)
	took := time.Since(sigterm)
	if err != nil {
		t.Fatalf("%v\n%s", err, g.log.text())
	}
	f.saw("exit status %d %s after SIGTERM", code, took.Round(time.Millisecond))
	if code != 0 {
		t.Errorf("the gateway exited with status %d\n%s", code, g.log.text())
	}

	res := l.halt()
	noAnswer := 0
	for _, fl := range res.failures {
		switch {
		case !isTransport(fl.err):
			t.Errorf("a call got a wrong answer during shutdown: %s", fl)
		case fl.at.Before(sigterm):
			t.Errorf("a call got no answer before SIGTERM: %s", fl)
		case fl.kind != callGet && be.seen.received(fl.text):
			t.Errorf("a call reached its backend, but its caller got no answer: %s", fl)
		default:
			noAnswer++
		}
	}
	if res.failed > len(res.failures) {
		t.Errorf("%d failures not checked", res.failed-len(res.failures))
	}
	f.saw("load: %d calls answered with a valid success, %d never accepted (no answer, never reached a backend)", res.succeeded(), noAnswer)

	// Every call the gateway accepted, it logged; the callers got them all.
	logged, loggedOK := 0, 0
	for _, op := range []dialect.Op{dialect.SendMessage, dialect.SendStreamingMessage, dialect.GetTask} {
		logged += g.log.callsLogged(op.String(), "")
		loggedOK += g.log.callsLogged(op.String(), "ok")
	}
	if want := res.succeeded() + sends + streams; loggedOK != logged || logged != want {
		t.Errorf("the gateway logged %d calls (%d ok); the callers got %d valid answers", logged, loggedOK, want)
	}
}

// TestShutdownTimeoutEndsCalls: calls still running when the shutdown
// timeout passes are ended, not cut. A held send gets a JSON-RPC error in
// its caller's dialect; a held stream ends with a clean end of its body
// (after, at most, an error event), never a reset; the gateway exits 0.
func TestShutdownTimeoutEndsCalls(t *testing.T) {
	const shutdownTimeout = time.Second
	f := newFault(t, "SIGTERM with calls outlasting the shutdown timeout")
	be, g := startForShutdown(t, shutdownTimeout)
	cl := newClient(t, g.url, 16)

	type outcome struct {
		kind   string
		target target
		answer gjson.Result // a send's answer, a stream's last event
		events int          // events a stream received after it was held
		err    error
	}
	outcomes := make(chan outcome, 2*len(targets))
	for i, tg := range targets {
		id := fmt.Sprintf("t%d", i)
		go func() {
			r, err := cl.call(context.Background(), tg, id, dialect.SendMessage, tg.c.sendParams("m-"+id, "wait unary "+id))
			outcomes <- outcome{kind: callSend, target: tg, answer: r, err: err}
		}()
		go func() {
			o := outcome{kind: callStream, target: tg}
			defer func() { outcomes <- o }()
			s, err := cl.openStream(context.Background(), tg, id, dialect.SendStreamingMessage, tg.c.sendParams("m-s"+id, "wait stream "+id))
			if err != nil {
				o.err = err
				return
			}
			defer s.close()
			for {
				r, err := s.next()
				if err != nil {
					if !errors.Is(err, io.EOF) {
						o.err = err
					}
					return
				}
				if r.Get("error").Exists() || o.answer.Get("error").Exists() {
					o.events++ // an error event, or anything after one
				}
				o.answer = r
			}
		}()
	}
	be.seen.awaitWaits(t, 2*len(targets), 30*time.Second)

	sigterm := time.Now()
	g.signal(syscall.SIGTERM)
	code, err := g.wait(shutdownTimeout + 5*time.Second)
	took := time.Since(sigterm)
	if err != nil {
		t.Fatalf("%v\n%s", err, g.log.text())
	}
	f.saw("exit status %d %s after SIGTERM (timeout %s)", code, took.Round(time.Millisecond), shutdownTimeout)
	if code != 0 {
		t.Errorf("the gateway exited with status %d\n%s", code, g.log.text())
	}
	// The calls still running at the timeout get a second to end theirs.
	if took < shutdownTimeout || took > shutdownTimeout+3*time.Second {
		t.Errorf("the gateway exited %s after SIGTERM; want just after its shutdown timeout of %s", took, shutdownTimeout)
	}

	var sends, streams []string
	for range 2 * len(targets) {
		o := <-outcomes
		switch {
		case o.err != nil:
			t.Errorf("held %s %s: %v", o.kind, o.target, o.err)
		case o.kind == callSend:
			e, err := asRPCError(o.target.c, o.answer)
			if err == nil && e.code != -32603 {
				err = fmt.Errorf("code %d, want -32603", e.code)
			}
			if err != nil {
				t.Errorf("held send %s: %v", o.target, err)
				continue
			}
			sends = append(sends, fmt.Sprintf("%d %q", e.code, e.message))
		default:
			desc := "clean end, no error event"
			if o.events > 0 {
				e, err := asRPCError(o.target.c, o.answer)
				if err == nil && (e.code != -32603 || o.events != 1) {
					err = fmt.Errorf("%d events after the first error, last %d %q", o.events, e.code, e.message)
				}
				if err != nil {
					t.Errorf("held stream %s: %v", o.target, err)
					continue
				}
				desc = fmt.Sprintf("error event %d %q, then a clean end", e.code, e.message)
			}
			streams = append(streams, desc)
		}
	}
	slices.Sort(sends)
	slices.Sort(streams)
	f.saw("held sends: %s", strings.Join(slices.Compact(sends), ", "))
	f.saw("held streams: %s", strings.Join(slices.Compact(streams), ", "))
}
