package main

import (
	"net/http"
	"time"

	"github.com/a2agate/gateway/bench/canned"
	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/testredis"
)

// Kinds of system under test.
const (
	kindDirect  = "direct"
	kindPlain   = "plain proxy"
	kindGateway = "gateway"
)

// sutCase is one system under test in front of (or being) the canned
// agent, loaded with sends from caller.
type sutCase struct {
	name   string
	kind   string
	caller canned.Dialect
	// backend is the dialect the canned agent is addressed in.
	backend canned.Dialect
	gateway *gatewaySetup // for gateway cases
	// start launches the system under test in front of the backend at
	// backendAddr and returns it with the URL the load goes to; nil for
	// the direct case.
	start func(b *bench, backendAddr string) (*process, string, error)
}

// unaryCases are the cases of the request/response table, in order.
func unaryCases() []sutCase {
	gw := func(name string, caller canned.Dialect, s gatewaySetup) sutCase {
		return sutCase{name: name, kind: kindGateway, caller: caller, backend: s.backend, gateway: &s, start: startGateway(s)}
	}
	return []sutCase{
		{name: "backend direct", kind: kindDirect, caller: canned.V10, backend: canned.V10},
		{name: "Go httputil.ReverseProxy", kind: kindPlain, caller: canned.V10, backend: canned.V10, start: startRevProxy},
		{name: "nginx", kind: kindPlain, caller: canned.V10, backend: canned.V10, start: startNginx},
		gw("gateway 1.0→1.0", canned.V10, gatewaySetup{backend: canned.V10}),
		gw("gateway 0.3→1.0", canned.V03, gatewaySetup{backend: canned.V10}),
		// Beside its untraced twin: what tracing every call costs.
		gw("gateway 0.3→1.0 +tracing", canned.V03, gatewaySetup{backend: canned.V10, tracing: true}),
		gw("gateway 1.0→0.3", canned.V10, gatewaySetup{backend: canned.V03}),
		gw("gateway 0.3→1.0 +JWT +memory index", canned.V03, gatewaySetup{backend: canned.V10, auth: true, store: "memory"}),
		gw("gateway 0.3→1.0 +JWT +Redis index", canned.V03, gatewaySetup{backend: canned.V10, auth: true, store: "redis"}),
	}
}

// streamCases are the cases of the streaming table: the plain proxies
// beside the gateway show what a proxy that does no translation adds to
// each event on the same machine in the same run; Go's ReverseProxy does it
// on the gateway's runtime and HTTP stack, and the TCP relay, which copies
// bytes without HTTP, is the floor any proxy on its own CPU stands on.
func streamCases() []sutCase {
	all := unaryCases()
	relay := sutCase{name: tcpRelayCase, kind: kindPlain, caller: canned.V10, backend: canned.V10, start: startTCPRelay}
	return []sutCase{all[0], relay, all[1], all[2], all[3], all[4]}
}

const tcpRelayCase = "TCP relay (bytes only)"

// idleStreamCase is the gateway case whose memory per open stream is
// measured.
const idleStreamCase = "gateway 1.0→1.0"

func startRevProxy(b *bench, backendAddr string) (*process, string, error) {
	return startPlainProxy(b, "revproxy", "http://"+backendAddr)
}

func startTCPRelay(b *bench, backendAddr string) (*process, string, error) {
	return startPlainProxy(b, "tcprelay", backendAddr)
}

// startPlainProxy runs `loadbench NAME -listen ADDR -upstream UPSTREAM`, one
// of the plain proxies the gateway is compared with, in front of the
// backend at upstream.
func startPlainProxy(b *bench, name, upstream string) (*process, string, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, "", err
	}
	p, err := b.startSUTProcess(name, []string{b.self, name, "-listen", addr, "-upstream", upstream}, nil, nil)
	if err != nil {
		return nil, "", err
	}
	return p, "http://" + addr + backendPath(canned.V10), p.waitReady("http://"+addr+"/v10/.well-known/agent-card.json", 10*time.Second)
}

func startNginx(b *bench, backendAddr string) (*process, string, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, "", err
	}
	argv, err := nginxArgv(b.tmp, addr, backendAddr)
	if err != nil {
		return nil, "", err
	}
	p, err := b.startSUTProcess("nginx", argv, nil, nil)
	if err != nil {
		return nil, "", err
	}
	return p, "http://" + addr + backendPath(canned.V10), p.waitReady("http://"+addr+"/v10/.well-known/agent-card.json", 10*time.Second)
}

func startGateway(s gatewaySetup) func(b *bench, backendAddr string) (*process, string, error) {
	return func(b *bench, backendAddr string) (*process, string, error) {
		addr, err := freeAddr()
		if err != nil {
			return nil, "", err
		}
		s.indexMaxTasks, s.admin = b.opt.indexMaxTasks, b.opt.gatewayAdmin
		if s.tracing {
			if s.collector, err = b.collectorURL(); err != nil {
				return nil, "", err
			}
		}
		s.pprof = s.admin != "" || b.opt.gatewayProfiles != ""
		if s.admin == "" {
			if s.admin, err = freeAddr(); err != nil {
				return nil, "", err
			}
		}
		path, err := writeGatewayConfig(b.tmp, gatewayConfig(addr, backendAddr, s, b.opt.redis, b.redisPrefix))
		if err != nil {
			return nil, "", err
		}
		p, err := b.startSUTProcess("gateway", []string{b.opt.gateway, "-config", path}, gatewayEnv(s), b.gatewayLog)
		if err != nil {
			return nil, "", err
		}
		p.admin = s.admin
		return p, "http://" + addr + "/", p.waitReady("http://"+addr+"/.well-known/agent-card.json", 20*time.Second)
	}
}

// skipReason tells why c cannot run here, or "".
func (b *bench) skipReason(c sutCase) string {
	if c.name == "nginx" {
		if _, err := nginxPath(); err != nil {
			return "skipped: " + err.Error()
		}
	}
	if c.gateway == nil {
		return ""
	}
	addr := "127.0.0.1:9"
	s := *c.gateway
	s.indexMaxTasks = b.opt.indexMaxTasks
	s.collector = "http://" + addr
	path, err := writeGatewayConfig(b.tmp, gatewayConfig(addr, addr, s, b.opt.redis, b.redisPrefix))
	if err != nil {
		return "skipped: " + err.Error()
	}
	if err := gatewayAccepts(b.opt.gateway, path, gatewayEnv(*c.gateway)); err != nil {
		return "skipped: not supported by this build (gateway validate: " + err.Error() + ")"
	}
	if c.gateway.store == "redis" {
		if err := testredis.Ping(b.opt.redis); err != nil {
			return "skipped: no Redis at " + b.opt.redis + ": " + err.Error()
		}
	}
	return ""
}

// header is what the load generator sends with c's requests.
func (c sutCase) header() http.Header {
	h := http.Header{"Content-Type": {"application/json"}}
	if c.caller == canned.V10 {
		h.Set(dialect.HeaderVersion, "1.0")
	}
	if c.gateway != nil && c.gateway.auth {
		h.Set("Authorization", "Bearer "+canned.HS256Token([]byte(benchSecret), canned.BenchClaims(benchIssuer, benchAudience)))
	}
	return h
}

// startBackend starts a canned agent on cpus and waits until it serves.
func (b *bench) startBackend(cpus string) (*process, string, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, "", err
	}
	p, err := startProcess("backend", cpus, []string{b.self, "backend", "-listen", addr}, nil, nil)
	if err != nil {
		return nil, "", err
	}
	if err := p.waitReady("http://"+addr+"/v10/.well-known/agent-card.json", 10*time.Second); err != nil {
		p.stop()
		return nil, "", err
	}
	return p, addr, nil
}

// startSUT starts the backend and the system under test of c. For the
// direct case they are the same process, on the system-under-test CPUs
// unless backendBeside puts it where the backend runs in the other cases:
// stream latencies compare the backend read directly with the backend read
// through the gateway, and the backend must be placed alike in both.
func (b *bench) startSUT(c sutCase, backendBeside bool) (sutRun, error) {
	if c.start == nil {
		cpus := b.sutCPUs
		if backendBeside {
			cpus = b.otherCPUs
		}
		backend, addr, err := b.startBackend(cpus)
		if err != nil {
			return sutRun{}, err
		}
		return sutRun{sut: backend, url: "http://" + addr + backendPath(c.backend)}, nil
	}
	backend, addr, err := b.startBackend(b.otherCPUs)
	if err != nil {
		return sutRun{}, err
	}
	sut, url, err := c.start(b, addr)
	if err != nil {
		if sut != nil {
			sut.stop()
		}
		backend.stop()
		return sutRun{}, err
	}
	return sutRun{sut: sut, backend: backend, url: url}, nil
}

// sutRun is what startSUT started: the system under test, the backend
// behind it (nil in the direct case, where the backend is the system under
// test) and the URL to call.
type sutRun struct {
	sut, backend *process
	url          string
}

// stop ends the system under test and the backend.
func (r sutRun) stop() {
	r.sut.stop()
	if r.backend != nil {
		r.backend.stop()
	}
}

// backendPIDs is the backend's process, for the samples that tell its CPU
// from the system under test's.
func (r sutRun) backendPIDs() []int {
	if r.backend == nil {
		return nil
	}
	return []int{r.backend.pid()}
}
