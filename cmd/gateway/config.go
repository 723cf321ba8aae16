package main

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/a2agate/gateway/proxy"
	"github.com/a2agate/gateway/store"
	"github.com/a2agate/gateway/telemetry"
)

// Defaults of Config.
const (
	defaultReadHeaderTimeout = 10 * time.Second
	defaultIdleTimeout       = 120 * time.Second
	defaultShutdownTimeout   = 30 * time.Second
	defaultReadTimeout       = 60 * time.Second
	defaultStreamWrite       = 60 * time.Second
	// maxMaxConcurrentStreams bounds server.max_concurrent_streams: every
	// open call holds a goroutine and its buffers, so one connection allowed
	// more could hold much of the gateway's memory, and a value past it is
	// more likely a typo than a plan.
	maxMaxConcurrentStreams = 10000
)

// Config is the gateway's configuration file.
type Config struct {
	// Listen is the traffic address. Required.
	Listen string `yaml:"listen"`
	// TLS serves the traffic listener over TLS (HTTP/1.1 and HTTP/2 by
	// ALPN, gRPC on HTTP/2); absent: plain HTTP/1.1 and h2c.
	TLS *proxy.ListenerTLS `yaml:"tls"`
	// Admin serves /healthz, /readyz and /metrics apart from traffic.
	Admin AdminConfig `yaml:"admin"`
	// Server tunes the traffic listener.
	Server ServerConfig `yaml:"server"`
	// Log sets the log level: debug, info, warn or error. Defaults to info.
	Log LogConfig `yaml:"log"`
	// Agents are the published agents. At least one is required.
	Agents []proxy.AgentConfig `yaml:"agents"`
	// Store is the task index shared by all agents.
	Store StoreConfig `yaml:"store"`
	// Tracing exports OpenTelemetry spans; off by default.
	Tracing telemetry.Config `yaml:"tracing"`
	// source is the content of the file the config was read from: the
	// watcher tells a change of the file against it.
	source []byte
}

// StoreConfig chooses the task index.
type StoreConfig struct {
	// Type is "memory" (one gateway) or "redis" (replicas sharing one
	// index). Defaults to "memory".
	Type   string             `yaml:"type"`
	Memory store.MemoryConfig `yaml:"memory"`
	Redis  store.RedisConfig  `yaml:"redis"`
}

// AdminConfig is the admin listener.
type AdminConfig struct {
	// Listen is the admin address; empty disables the admin listener.
	Listen string `yaml:"listen"`
	// Pprof serves Go's profiles under /debug/pprof/ on the admin listener,
	// for diagnosing CPU and memory in production. Off by default: a
	// profile shows request data and costs CPU while it is taken.
	Pprof bool `yaml:"pprof"`
}

// ServerConfig tunes the traffic listener. There is no whole-response write
// timeout on purpose: it would cut long event streams, whose writes are
// bounded one event at a time instead.
type ServerConfig struct {
	// ReadHeaderTimeout bounds reading a request's headers. Defaults to 10s.
	ReadHeaderTimeout time.Duration `yaml:"read_header_timeout"`
	// ReadTimeout bounds reading a request's body, from the end of its
	// headers: a caller that declares a body and sends none is answered
	// with an error and its connection closed. Defaults to 60s.
	ReadTimeout time.Duration `yaml:"read_timeout"`
	// StreamWriteTimeout bounds writing one stream event to the caller: a
	// caller that does not take an event within it is cut, logged and
	// counted. Defaults to 60s.
	StreamWriteTimeout time.Duration `yaml:"stream_write_timeout"`
	// MaxConcurrentStreams bounds the calls one HTTP/2 connection may have
	// open at once (SETTINGS_MAX_CONCURRENT_STREAMS), on the traffic
	// listener and on every agent's grpc_listen alike; a call past it is
	// refused (REFUSED_STREAM). Defaults to 250 (net/http's and the gRPC
	// binding's own), at most 10000.
	MaxConcurrentStreams int `yaml:"max_concurrent_streams" zero:"unset"`
	// IdleTimeout closes idle keep-alive connections. Defaults to 120s.
	IdleTimeout time.Duration `yaml:"idle_timeout"`
	// ShutdownTimeout bounds how long in-flight calls may finish after
	// SIGTERM. Calls still running then are ended: a unary call is answered
	// with an error, a stream's body ends. Defaults to 30s.
	ShutdownTimeout time.Duration `yaml:"shutdown_timeout"`
}

// LogConfig sets logging.
type LogConfig struct {
	// Level is debug, info, warn or error. Defaults to info.
	Level string `yaml:"level"`
}

func (c *Config) setDefaults() {
	c.Server.ReadHeaderTimeout = cmp.Or(c.Server.ReadHeaderTimeout, defaultReadHeaderTimeout)
	c.Server.ReadTimeout = cmp.Or(c.Server.ReadTimeout, defaultReadTimeout)
	c.Server.StreamWriteTimeout = cmp.Or(c.Server.StreamWriteTimeout, defaultStreamWrite)
	c.Server.IdleTimeout = cmp.Or(c.Server.IdleTimeout, defaultIdleTimeout)
	c.Server.MaxConcurrentStreams = cmp.Or(c.Server.MaxConcurrentStreams, proxy.DefaultMaxConcurrentStreams)
	c.Server.ShutdownTimeout = cmp.Or(c.Server.ShutdownTimeout, defaultShutdownTimeout)
	c.Log.Level = cmp.Or(c.Log.Level, "info")
	c.Store.Type = cmp.Or(c.Store.Type, "memory")
	c.Store.Memory.SetDefaults()
	c.Store.Redis.SetDefaults()
	for i := range c.Agents {
		// A TTL the store refuses (negative) is its own error, not also
		// every agent's retries.window.
		if r := &c.Agents[i].Retries; r.Window == 0 && c.taskTTL() > 0 {
			r.Window = min(proxy.DefaultRetryWindow, c.taskTTL())
		}
		c.Agents[i].SetDefaults()
	}
	c.Tracing.SetDefaults()
}

// validate reports every problem at once.
func (c *Config) validate() error {
	var errs []error
	if c.Listen == "" {
		errs = append(errs, errors.New("listen is required"))
	}
	// Every listener is checked here, so that a config validate passes
	// does not fail at start with "address already in use" for a port it
	// gave twice.
	var listeners []listenField
	for _, l := range []listenField{{"listen", c.Listen}, {"admin.listen", c.Admin.Listen}} {
		if l.addr == "" {
			continue
		}
		if err := checkListen(l.field, l.addr); err != nil {
			errs = append(errs, err)
			continue
		}
		for _, other := range listeners {
			if listenOverlap(l.addr, other.addr) {
				errs = append(errs, fmt.Errorf("%s %q takes the port of %s (%s): give each listener a port of its own%s", l.field, l.addr, other.field, other.addr, nameNote(l.addr, other.addr)))
			}
		}
		listeners = append(listeners, l)
	}
	switch c.Log.Level {
	case "debug", "info", "warn", "error":
	default:
		errs = append(errs, fmt.Errorf("log.level %q is not one of debug, info, warn, error", c.Log.Level))
	}
	switch c.Store.Type {
	case "memory":
		if err := c.Store.Memory.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("store.memory: %w", err))
		}
	case "redis":
		if err := c.Store.Redis.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("store.redis: %w", err))
		}
	default:
		errs = append(errs, fmt.Errorf("store.type %q is not one of memory, redis", c.Store.Type))
	}
	if err := c.Tracing.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("tracing: %w", err))
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"read_header_timeout", c.Server.ReadHeaderTimeout}, {"read_timeout", c.Server.ReadTimeout}, {"stream_write_timeout", c.Server.StreamWriteTimeout}, {"idle_timeout", c.Server.IdleTimeout}, {"shutdown_timeout", c.Server.ShutdownTimeout}} {
		if d.v < 0 {
			errs = append(errs, fmt.Errorf("server.%s must not be negative", d.name))
		}
		if err := proxy.CheckMaxWait("server."+d.name, d.v); err != nil {
			errs = append(errs, err)
		}
	}
	if n := c.Server.MaxConcurrentStreams; n < 1 || n > maxMaxConcurrentStreams {
		errs = append(errs, fmt.Errorf("server.max_concurrent_streams (%d) is not between 1 and %d", n, maxMaxConcurrentStreams))
	}
	if len(c.Agents) == 0 {
		errs = append(errs, errors.New("agents: at least one agent is required"))
	}
	if c.TLS != nil {
		if err := c.TLS.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("tls: %w", err))
		}
	}
	names, paths := map[string]bool{}, map[string]*proxy.AgentConfig{}
	for i := range c.Agents {
		a := &c.Agents[i]
		if err := a.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("agents[%d] (%s): %w", i, a.Name, err))
		}
		if ttl := c.taskTTL(); ttl > 0 && a.Retries.Window > ttl {
			errs = append(errs, fmt.Errorf("agents[%d] (%s): retries.window (%s) is longer than the task index's ttl (%s): a retry could outlive its task", i, a.Name, a.Retries.Window, ttl))
		}
		if names[a.Name] {
			errs = append(errs, fmt.Errorf("agents[%d]: name %q is used twice", i, a.Name))
		}
		// Each path is served with and without its trailing slash.
		p := strings.TrimSuffix(a.Path, "/")
		switch other, ok := paths[p]; {
		case ok && other.Path == a.Path:
			errs = append(errs, fmt.Errorf("agents[%d]: path %q is used twice", i, a.Path))
		case ok:
			errs = append(errs, fmt.Errorf("agents[%d]: path %q and agent %q's %q differ only by a trailing slash: each is served at both", i, a.Path, other.Name, other.Path))
		default:
			paths[p] = a
		}
		names[a.Name] = true
		for j := range i {
			for _, p := range [][2]int{{j, i}, {i, j}} {
				parent, child := &c.Agents[p[0]], &c.Agents[p[1]]
				if err := proxy.NestedPathConflict(parent.Path, child.Path); err != nil {
					errs = append(errs, fmt.Errorf("agents[%d] (%s): path %q %w", p[1], child.Name, child.Path, err))
				}
			}
		}
		if l := a.GRPCListen; l != "" {
			field := fmt.Sprintf("agents[%d] (%s): grpc_listen", i, a.Name)
			if err := checkListen(field, l); err != nil {
				errs = append(errs, err)
				continue
			}
			for _, other := range listeners {
				if listenOverlap(l, other.addr) {
					errs = append(errs, fmt.Errorf("%s %q takes the port of %s (%s): a listener serves one agent's gRPC, or the traffic, or the admin endpoints%s", field, l, other.field, other.addr, nameNote(l, other.addr)))
				}
			}
			listeners = append(listeners, listenField{fmt.Sprintf("agent %q's grpc_listen", a.Name), l})
		}
	}
	return errors.Join(errs...)
}

// listenField is a listener's address and the field that sets it.
type listenField struct{ field, addr string }

// checkListen refuses an address net.Listen would refuse at start for its
// form (no port: "8080" for ":8080").
func checkListen(field, addr string) error {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return fmt.Errorf("%s %q is not host:port (e.g. :8080 for every interface, 127.0.0.1:8080 for loopback): %w", field, addr, err)
	}
	return nil
}

// listenOverlap reports whether listeners on a and b would take one port:
// the same port on the same host, or on any host when either listens on
// every interface (":8080" and "[::]:8080", which Go opens dual-stack, or
// "0.0.0.0:8080" for every IPv4 one, which leaves an IPv6 address's port
// free). Port 0 is a free port of the system's choosing, a different one
// each time. A host name on the port of another listener counts as taking
// it: net.Listen resolves it only at start ("localhost" is 127.0.0.1 or
// ::1), and a validate that resolved it could answer otherwise than the
// host that starts the gateway.
func listenOverlap(a, b string) bool {
	ha, pa, errA := net.SplitHostPort(a)
	hb, pb, errB := net.SplitHostPort(b)
	if errA != nil || errB != nil || pa != pb || pa == "0" {
		return false
	}
	every := func(h, other string) bool {
		switch ip := net.ParseIP(h); {
		case h == "" || (ip != nil && ip.Equal(net.IPv6unspecified)):
			return true
		case ip != nil && ip.Equal(net.IPv4zero):
			o := net.ParseIP(other)
			return o == nil || o.To4() != nil
		}
		return false
	}
	return ha == hb || every(ha, hb) || every(hb, ha) || hostName(ha) || hostName(hb)
}

// hostName reports whether a listen address's host is a name, not an IP
// address or empty (every interface).
func hostName(h string) bool { return h != "" && net.ParseIP(h) == nil }

// nameNote is what an overlap of a and b owes to a host name, for the
// error: how to say which address is meant.
func nameNote(a, b string) string {
	for _, addr := range []string{a, b} {
		if h, _, err := net.SplitHostPort(addr); err == nil && hostName(h) {
			return fmt.Sprintf(" (%q is a host name, resolved only at start, which may stand for that address: to share the port, write the IP addresses meant, 127.0.0.1 for localhost)", h)
		}
	}
	return ""
}

var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// expandEnv replaces ${VAR} in every key and value of doc with the
// variable's value; comments are not read, so a line commented out does
// not need its variables. An unset variable is an error, not an empty
// string: a missing secret must not pass silently. A value is one scalar
// whatever the variable holds (a newline or a ": " cannot add settings),
// and a plain one is read as if the value were written there: ${SIZE}
// expanding to 4096 is a number.
func expandEnv(doc *yaml.Node) error {
	var missing, where []string
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.ScalarNode && strings.Contains(n.Value, "${") {
			n.Value = envRef.ReplaceAllStringFunc(n.Value, func(m string) string {
				name := m[2 : len(m)-1]
				v, ok := os.LookupEnv(name)
				if !ok && !slices.Contains(missing, name) {
					missing = append(missing, name)
					where = append(where, fmt.Sprintf("%s at line %d", name, n.Line))
				}
				return v
			})
			if n.Style&yaml.TaggedStyle == 0 {
				n.Tag = "" // resolved again from the value, as written
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(doc)
	if len(missing) > 0 {
		return fmt.Errorf("environment variables not set: %v (%s)", missing, strings.Join(where, ", "))
	}
	return nil
}

// parseConfig decodes a config strictly (unknown keys are errors), applies
// defaults and validates it.
func parseConfig(raw []byte) (*Config, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	// A second document would be ignored by the decoder, and with it every
	// setting written there: a config is one document.
	var next yaml.Node
	if err := dec.Decode(&next); err == nil && !emptyDocument(&next) {
		return nil, fmt.Errorf("a second YAML document starts at line %d (after ---): a config is one document, so its settings would be ignored; merge them into the first or remove the ---", next.Line)
	} else if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if err := expandEnv(&doc); err != nil {
		return nil, err
	}
	// checkFields refuses every key Config does not know, which makes the
	// node's own decoding (which does not) strict.
	if err := checkFields(&doc); err != nil {
		return nil, err
	}
	var c Config
	if doc.Kind != 0 {
		if err := doc.Decode(&c); err != nil {
			return nil, err
		}
	}
	c.setDefaults()
	if err := c.validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

// emptyDocument reports whether n is a document with nothing in it (a
// trailing --- makes one).
func emptyDocument(n *yaml.Node) bool {
	return len(n.Content) == 0 || (n.Content[0].Kind == yaml.ScalarNode && n.Content[0].Tag == "!!null")
}

// maxConfigBytes bounds a config file: it is read whole at start, at
// every reload and by the watcher every configPollInterval, so a file
// that grew by mistake (a log written to it, a volume mounted over it)
// would cost that memory and its parsing each time. A config of many
// agents is some KiB each.
const maxConfigBytes = 1 << 20

// readConfigFile reads the config file at path, refusing one past
// maxConfigBytes without reading it all; with that refusal it returns
// what it read, maxConfigBytes+1 bytes, for the watcher to tell a change
// by.
func readConfigFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
	if err != nil {
		return nil, err
	}
	if len(raw) > maxConfigBytes {
		return raw, fmt.Errorf("%s is larger than %d bytes (1 MiB): is it the config file?", path, maxConfigBytes)
	}
	return raw, nil
}

func loadConfig(path string) (*Config, error) {
	raw, err := readConfigFile(path)
	if err != nil {
		return nil, err
	}
	c, err := parseConfig(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	c.source = raw
	return c, nil
}

// taskTTL is the configured task index's TTL.
func (c *Config) taskTTL() time.Duration {
	if c.Store.Type == "redis" {
		return c.Store.Redis.TTL
	}
	return c.Store.Memory.TTL
}
