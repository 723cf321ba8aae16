package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/a2agate/gateway/bench/canned"
	"github.com/a2agate/gateway/proxy"
	"github.com/a2agate/gateway/store"
	"github.com/a2agate/gateway/telemetry"
)

// gatewayFile mirrors the parts of the gateway's config file the
// benchmark writes, with the gateway's own types, so that a key the
// gateway would reject fails here too.
type gatewayFile struct {
	Listen string `yaml:"listen"`
	Log    struct {
		Level string `yaml:"level"`
	} `yaml:"log"`
	Agents []proxy.AgentConfig `yaml:"agents"`
	Admin  struct {
		Listen string `yaml:"listen"`
		Pprof  bool   `yaml:"pprof"`
	} `yaml:"admin"`
	Store struct {
		Type   string             `yaml:"type"`
		Memory store.MemoryConfig `yaml:"memory"`
		Redis  store.RedisConfig  `yaml:"redis"`
	} `yaml:"store"`
	Tracing telemetry.Config `yaml:"tracing"`
}

func TestGatewayConfigIsValid(t *testing.T) {
	t.Setenv(benchSecretEnv, benchSecret)
	for _, s := range []gatewaySetup{
		{backend: canned.V10},
		{backend: canned.V03},
		{backend: canned.V10, auth: true, store: "memory"},
		{backend: canned.V10, auth: true, store: "redis"},
		{backend: canned.V03, indexMaxTasks: 1000},
		{backend: canned.V10, admin: "127.0.0.1:6061"},
		{backend: canned.V10, admin: "127.0.0.1:6061", pprof: true},
		{backend: canned.V03, tracing: true, collector: "http://127.0.0.1:4318"},
	} {
		raw := gatewayConfig("127.0.0.1:8080", "127.0.0.1:9090", s, "127.0.0.1:6379", "loadbench:1:")
		var f gatewayFile
		dec := yaml.NewDecoder(bytes.NewReader([]byte(raw)))
		dec.KnownFields(true)
		if err := dec.Decode(&f); err != nil {
			t.Fatalf("%+v: %v\n%s", s, err, raw)
		}
		if len(f.Agents) != 1 {
			t.Fatalf("%+v: %d agents", s, len(f.Agents))
		}
		a := f.Agents[0]
		a.SetDefaults()
		if err := a.Validate(); err != nil {
			t.Fatalf("%+v: %v\n%s", s, err, raw)
		}
		if a.MaxCallsPerCaller != proxy.MaxMaxCallsPerCaller {
			t.Fatalf("%+v: max_calls_per_caller %d: the load generator, one caller, would be refused past it", s, a.MaxCallsPerCaller)
		}
		if a.Backend.URL != "http://127.0.0.1:9090"+backendPath(s.backend) || string(a.Backend.Dialect) != string(s.backend) {
			t.Fatalf("%+v: backend %+v", s, a.Backend)
		}
		wantStore := s.store
		if s.indexMaxTasks > 0 {
			wantStore = "memory"
			if f.Store.Memory.MaxTasks != s.indexMaxTasks {
				t.Fatalf("%+v: max_tasks %d", s, f.Store.Memory.MaxTasks)
			}
		}
		if (a.Auth != nil) != s.auth || f.Store.Type != wantStore {
			t.Fatalf("%+v: auth %v store %q", s, a.Auth != nil, f.Store.Type)
		}
		if f.Admin.Listen != s.admin || f.Admin.Pprof != s.pprof {
			t.Fatalf("%+v: admin %+v", s, f.Admin)
		}
		f.Tracing.SetDefaults()
		if err := f.Tracing.Validate(); err != nil || f.Tracing.Enabled != s.tracing || (s.tracing && (f.Tracing.OTLP.Endpoint != s.collector || *f.Tracing.SampleRatio != 1)) {
			t.Fatalf("%+v: tracing %+v: %v", s, f.Tracing, err)
		}
		if s.store == "redis" {
			f.Store.Redis.SetDefaults()
			if err := f.Store.Redis.Validate(); err != nil || f.Store.Redis.KeyPrefix != "loadbench:1:" {
				t.Fatalf("redis: %v %+v", err, f.Store.Redis)
			}
		}
	}
}

func TestNginxConfig(t *testing.T) {
	c := nginxConfig("/tmp/x", "127.0.0.1:8081", "127.0.0.1:9090")
	for _, want := range []string{
		"master_process off;", "worker_processes 1;", "daemon off;", "access_log off;",
		"listen 127.0.0.1:8081", "server 127.0.0.1:9090;", "keepalive 1024;",
		"proxy_http_version 1.1;", `proxy_set_header Connection "";`, "pid /tmp/x/nginx.pid;",
	} {
		if !strings.Contains(c, want) {
			t.Errorf("nginx config lacks %q:\n%s", want, c)
		}
	}
	if strings.Contains(c, "{") && strings.Contains(c, "{dir}") {
		t.Errorf("placeholder left in:\n%s", c)
	}
}

func TestParseConns(t *testing.T) {
	got, err := parseConns("1, 32,256")
	if err != nil || len(got) != 3 || got[0] != 1 || got[1] != 32 || got[2] != 256 {
		t.Fatalf("%v %v", got, err)
	}
	for _, bad := range []string{"", "0", "1,x", "-3"} {
		if _, err := parseConns(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestParseIntervals(t *testing.T) {
	got, err := parseIntervals("100ms, 250ms")
	if err != nil || len(got) != 2 || got[0] != 100*time.Millisecond || got[1] != 250*time.Millisecond {
		t.Fatalf("%v %v", got, err)
	}
	for _, bad := range []string{"", "100", "0s", "-1s", "100ms,"} {
		if _, err := parseIntervals(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
