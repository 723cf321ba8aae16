package redistopo

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// startTimeout bounds the start of one topology: processes up, the cluster
// formed, the sentinels agreed, on a machine that may be busy.
const startTimeout = 60 * time.Second

// Require skips the test when redis-server or redis-cli is not installed,
// and in -short mode, which the multi-process topologies are too slow for.
func Require(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts Redis topologies; skipped in -short mode")
	}
	for _, bin := range []string{"redis-server", "redis-cli"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("%s not installed: %v", bin, err)
		}
	}
}

// Node is one redis-server (or sentinel) process.
type Node struct {
	Addr string
	// Port is the TLS port Addr names.
	Port int

	t      testing.TB
	dir    string
	args   []string
	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
}

// Env is what the nodes of one topology share: the test, a directory and
// the certificates.
type Env struct {
	// TLS are the certificates: every node requires a client certificate
	// signed by TLS.CA.
	TLS TLSFiles

	t   testing.TB
	dir string
}

func newEnv(t testing.TB) *Env {
	t.Helper()
	Require(t)
	dir := t.TempDir()
	return &Env{t: t, dir: dir, TLS: makeCerts(t, dir)}
}

// freePort returns a port that was free a moment ago: the kernel picks it
// for a listener closed at once. Another process may take it before
// redis-server binds it; start retries on another port if so.
func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// tlsArgs are the server options of a TLS-only node.
func (e *Env) tlsArgs(port int) []string {
	return []string{
		"--port", "0", "--tls-port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--tls-cert-file", e.TLS.ServerCert, "--tls-key-file", e.TLS.ServerKey,
		"--tls-ca-cert-file", e.TLS.CA, "--tls-auth-clients", "yes", "--tls-replication", "yes",
	}
}

// start runs redis-server with args plus the node's own port, directory
// and log file, and waits until it answers PING. extra builds the options
// that depend on the port (a sentinel's config file, a cluster bus port).
func (e *Env) start(name string, extra func(dir string, port int) []string) *Node {
	e.t.Helper()
	var last error
	for range 3 {
		port := freePort(e.t)
		dir := filepath.Join(e.dir, fmt.Sprintf("%s-%d", name, port))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			e.t.Fatal(err)
		}
		args := extra(dir, port)
		args = append(args, e.tlsArgs(port)...)
		args = append(args, "--dir", dir, "--logfile", filepath.Join(dir, "redis.log"))
		n := &Node{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Port: port, t: e.t, dir: dir, args: args}
		if last = n.run(); last == nil {
			if last = e.waitPing(n); last == nil {
				return n
			}
			n.Kill()
		}
	}
	e.t.Fatalf("starting %s: %v", name, last)
	return nil
}

func (n *Node) run() error {
	cmd := exec.Command("redis-server", n.args...)
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	n.mu.Lock()
	n.cmd, n.exited = cmd, exited
	n.mu.Unlock()
	n.t.Cleanup(n.Kill)
	return nil
}

// Kill stops the node at once (SIGKILL), as a crash would, and waits for
// it to exit.
func (n *Node) Kill() {
	n.mu.Lock()
	cmd, exited := n.cmd, n.exited
	n.mu.Unlock()
	if cmd == nil {
		return
	}
	cmd.Process.Kill()
	<-exited
}

// Restart starts a killed node again on its port, with its directory (a
// cluster node keeps its identity and slots from nodes.conf; the data of a
// node without persistence is gone), and waits until it answers PING.
func (e *Env) Restart(n *Node) {
	e.t.Helper()
	if n.alive() {
		e.t.Fatalf("restarting %s: still running", n.Addr)
	}
	if err := n.run(); err != nil {
		e.t.Fatalf("restarting %s: %v", n.Addr, err)
	}
	if err := e.waitPing(n); err != nil {
		e.t.Fatalf("restarting %s: %v", n.Addr, err)
	}
}

func (n *Node) alive() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	select {
	case <-n.exited:
		return false
	default:
		return true
	}
}

// Log returns the node's log, for a failing test's message.
func (n *Node) Log() string {
	b, _ := os.ReadFile(filepath.Join(n.dir, "redis.log"))
	return string(b)
}

// ClientTLS is the TLS configuration of a client of the topology.
func (e *Env) ClientTLS() *tls.Config {
	e.t.Helper()
	cert, err := tls.LoadX509KeyPair(e.TLS.ClientCert, e.TLS.ClientKey)
	if err != nil {
		e.t.Fatal(err)
	}
	pem, err := os.ReadFile(e.TLS.CA)
	if err != nil {
		e.t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pem)
	return &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: roots, ServerName: "127.0.0.1"}
}

// Client returns a plain client of node, closed when the test ends.
func (e *Env) Client(n *Node) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: n.Addr, TLSConfig: e.ClientTLS(), DialTimeout: 2 * time.Second, MaxRetries: -1})
	e.t.Cleanup(func() { c.Close() })
	return c
}

func (e *Env) waitPing(n *Node) error {
	c := redis.NewClient(&redis.Options{Addr: n.Addr, TLSConfig: e.ClientTLS(), DialTimeout: time.Second, MaxRetries: -1})
	defer c.Close()
	return waitFor(startTimeout, func() error {
		select {
		case <-n.exited:
			return errStop{fmt.Errorf("redis-server %s exited:\n%s", n.Addr, tail(n.Log()))}
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		return c.Ping(ctx).Err()
	})
}

// errStop ends waitFor at once.
type errStop struct{ error }

// waitFor polls check until it succeeds, returns errStop or timeout passes.
// The topologies change on their own time (a cluster forming, a sentinel
// electing): there is no event to wait on but their own reports.
func waitFor(timeout time.Duration, check func() error) error {
	deadline := time.Now().Add(timeout)
	delay := 10 * time.Millisecond
	for {
		err := check()
		var stop errStop
		switch {
		case err == nil:
			return nil
		case errors.As(err, &stop):
			return stop.error
		case time.Now().After(deadline):
			return fmt.Errorf("not after %s: %w", timeout, err)
		}
		time.Sleep(delay) // polling an outside process; nothing to wait on
		delay = min(2*delay, 200*time.Millisecond)
	}
}

func tail(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-15):], "\n")
}
