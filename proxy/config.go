package proxy

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/a2agate/gateway/auth"
	grpcbind "github.com/a2agate/gateway/binding/grpc"
	"github.com/a2agate/gateway/binding/rest"
	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/staticheader"
	"github.com/a2agate/gateway/push"
)

// Defaults of AgentConfig and BackendConfig.
const (
	DefaultPath                  = "/"
	DefaultMaxBodyBytes          = 4 << 20
	DefaultMaxReplyBytes         = 16 << 20
	DefaultMaxEventBytes         = 4 << 20
	DefaultConnectTimeout        = 5 * time.Second
	DefaultResponseHeaderTimeout = 5 * time.Minute
	DefaultResponseTimeout       = 10 * time.Minute
	DefaultStreamIdleTimeout     = 5 * time.Minute
	DefaultInterruptGrace        = 250 * time.Millisecond
	DefaultMaxIdleConns          = 256
	DefaultMaxCallsPerCaller     = 1000
)

// Upper bounds of the config's waits and sizes: past them a value is a
// typo that turns a bound off, not a tuning.
const (
	// MaxWait bounds every configured timeout and interval: a wait of days
	// holds a caller's connection, goroutine and buffers for days, which
	// is no bound at all.
	MaxWait = 24 * time.Hour
	// MaxBytes bounds every configured size: a body, reply or event is
	// held in memory whole, so a bound of terabytes lets one call exhaust
	// the gateway's memory.
	MaxBytes = 1 << 30
	// MaxMaxIdleConns bounds backend.max_idle_conns: an idle connection
	// holds buffers and goroutines, and a pool larger than any call count
	// the gateway serves is a typo.
	MaxMaxIdleConns = 10000
	// MaxMaxCallsPerCaller bounds max_calls_per_caller: each call holds a
	// goroutine and its buffers, so a caller allowed more could hold the
	// gateway's memory alone.
	MaxMaxCallsPerCaller = 1_000_000
)

// DefaultMaxConcurrentStreams is the default bound on the calls one HTTP/2
// connection may have open at once: the gRPC binding's, which is net/http's.
const DefaultMaxConcurrentStreams = grpcbind.DefaultMaxConcurrentStreams

// AgentConfig publishes one backend agent through the gateway.
type AgentConfig struct {
	// Name identifies the agent in logs and metrics. Required.
	Name string `yaml:"name"`
	// Path is where the gateway serves the agent's JSON-RPC endpoint; its
	// cards are served under it at /.well-known/. Defaults to "/".
	Path string `yaml:"path"`
	// PublicURL is the URL callers reach the agent at, written into every
	// card the gateway publishes. Required.
	PublicURL string `yaml:"public_url"`
	// Backend is the agent the gateway forwards to. Required.
	Backend BackendConfig `yaml:"backend"`
	// MaxBodyBytes bounds a caller's request body; larger ones are refused
	// before they are read in full. Defaults to 4 MiB.
	MaxBodyBytes int64 `yaml:"max_body_bytes" zero:"unset"`
	// MaxReplyBytes bounds a backend's unary reply. Defaults to 16 MiB.
	MaxReplyBytes int64 `yaml:"max_reply_bytes" zero:"unset"`
	// MaxEventBytes bounds one stream event from the backend; a larger one
	// ends the stream with an error. Defaults to 4 MiB.
	MaxEventBytes int `yaml:"max_event_bytes" zero:"unset"`
	// MaxCallsPerCaller bounds the calls, unary and streams, one caller
	// (its token's subject, or without auth its remote address) may have
	// in flight at once on the agent; one past it is refused with HTTP 429.
	// Defaults to 1000, at most 1,000,000.
	MaxCallsPerCaller int `yaml:"max_calls_per_caller" zero:"unset"`
	// TrustedProxies are the load balancers in front of the gateway, as
	// addresses or CIDR networks: a call without a token from one of them
	// is counted, for max_calls_per_caller, against the address it names
	// last in X-Forwarded-For that is not a trusted proxy itself. Absent:
	// every call is counted against its peer.
	TrustedProxies []string `yaml:"trusted_proxies"`
	// Card adjusts the agent card the gateway publishes.
	Card CardConfig `yaml:"card"`
	// Auth requires a Bearer JWT on every call to this agent. Absent: no
	// authentication, and every caller is the same anonymous principal.
	Auth *auth.Config `yaml:"auth"`
	// Tasks sets how the gateway guards tasks.
	Tasks TasksConfig `yaml:"tasks"`
	// Skills routes work by skill.
	Skills SkillsConfig `yaml:"skills"`
	// Retries sets how sends sent again are recognised and answered.
	Retries RetriesConfig `yaml:"retries"`
	// Push relays the backend's push notifications to the callers' webhooks.
	Push push.Config `yaml:"push"`
	// Bindings are the protocol bindings the gateway serves and lists on
	// the agent's cards, by their names jsonrpc, http_json and grpc.
	// Defaults to all three. One left out is neither served nor listed; at
	// least one must remain (the backend stays JSON-RPC either way).
	Bindings []string `yaml:"bindings"`
	// GRPCListen, when set, is the address of a listener of the agent's
	// own that serves its gRPC binding with grpc-go's own HTTP/2 transport,
	// cheaper than gRPC beside HTTP/1.1 on the traffic listener; the cards
	// list the binding there, and the traffic listener no longer serves it
	// for this agent.
	GRPCListen string `yaml:"grpc_listen"`
	// GRPCTLS is the certificate of the grpc_listen listener. Absent: the
	// traffic listener's (TLS when it has it, plain HTTP/2 when not).
	GRPCTLS *ListenerTLS `yaml:"grpc_tls"`
	// GRPCPublicAddress is the host:port the cards list for grpc_listen.
	// Defaults to public_url's host with the listener's port.
	GRPCPublicAddress string `yaml:"grpc_public_address"`
}

// ListenerTLS is a listener's certificate: TLS 1.2 or later, HTTP/2 offered
// by ALPN beside HTTP/1.1.
type ListenerTLS struct {
	// CertFile and KeyFile are the PEM certificate chain and private key.
	// Both are required.
	CertFile string `yaml:"cert_file"`
	KeyFile  string `yaml:"key_file"`
}

// Validate reports a missing file name.
func (t *ListenerTLS) Validate() error {
	if t.CertFile == "" || t.KeyFile == "" {
		return errors.New("cert_file and key_file are both required")
	}
	return nil
}

// trustedProxies are TrustedProxies parsed; Validate refused any that is not.
func (c *AgentConfig) trustedProxies() []netip.Prefix {
	var nets []netip.Prefix
	for _, p := range c.TrustedProxies {
		if n, err := parseTrustedProxy(p); err == nil {
			nets = append(nets, n)
		}
	}
	return nets
}

func parseTrustedProxy(s string) (netip.Prefix, error) {
	if addr, err := netip.ParseAddr(s); err == nil {
		addr = addr.Unmap()
		return netip.PrefixFrom(addr, addr.BitLen()), nil
	}
	n, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	if n.Addr().Is4In6() {
		n = netip.PrefixFrom(n.Addr().Unmap(), n.Bits()-96)
	}
	return n.Masked(), nil
}

// Serves reports whether the gateway serves binding b for the agent.
func (c *AgentConfig) Serves(b dialect.Binding) bool {
	return c.Bindings == nil || slices.Contains(c.Bindings, b.String())
}

// PublishedBindings are the bindings Serves reports, in dialect.Bindings order.
func (c *AgentConfig) PublishedBindings() []dialect.Binding {
	var list []dialect.Binding
	for _, b := range dialect.Bindings {
		if c.Serves(b) {
			list = append(list, b)
		}
	}
	return list
}

// TasksConfig sets how the gateway guards tasks.
type TasksConfig struct {
	// AllowUnknown serves calls for tasks the gateway never saw created
	// (tasks from before it was deployed), unchecked. Defaults to false:
	// such calls get "task not found".
	AllowUnknown bool `yaml:"allow_unknown"`
}

// SkillsConfig routes new work by the skill a message names in
// metadata.skillId. Follow-up calls go to the backend that owns the task.
type SkillsConfig struct {
	// Default is the skill used when a message names none (standard SDK
	// clients never do). Without it, an agent with several skills answers
	// such messages with an error listing the skills.
	Default string `yaml:"default"`
	// Routes send skills to other backends than the agent's own.
	Routes []SkillRoute `yaml:"routes"`
}

// SkillRoute sends one skill to its own backend.
type SkillRoute struct {
	// Skill is the skill id, as on that backend's card. Required.
	Skill string `yaml:"skill"`
	// Backend serves the skill. Required.
	Backend BackendConfig `yaml:"backend"`
}

// DefaultCardRefresh is how often a backend's card is fetched again.
const DefaultCardRefresh = 5 * time.Minute

// DefaultCardFetchTimeout bounds one read of a backend's card, every URL
// tried included.
const DefaultCardFetchTimeout = 10 * time.Second

// MaxCardFetchTimeout bounds card.fetch_timeout: the start and every reload
// wait up to it for the slowest agent's first card, and a card that comes
// later is the refresher's to fetch, so a longer bound only holds a rollout
// back.
const MaxCardFetchTimeout = 5 * time.Minute

// CardConfig lets a platform team adjust the published card without
// touching the backend. Empty fields keep the backend's value.
type CardConfig struct {
	// RefreshInterval is how often the backend's card is fetched again; a
	// failed fetch keeps the last good card. Defaults to 5m.
	RefreshInterval time.Duration `yaml:"refresh_interval"`
	// FetchTimeout bounds one read of the backend's card as a whole: every
	// URL it is looked for at, the cards of the routed skills' backends,
	// and at start the read that tells an "auto" dialect. An agent whose
	// card did not arrive within it starts unready, and the refresher
	// keeps trying. Defaults to 10s.
	FetchTimeout     time.Duration `yaml:"fetch_timeout"`
	Name             string        `yaml:"name"`
	Description      string        `yaml:"description"`
	IconURL          string        `yaml:"icon_url"`
	DocumentationURL string        `yaml:"documentation_url"`
	Provider         *struct {
		Organization string `yaml:"organization"`
		URL          string `yaml:"url"`
	} `yaml:"provider"`
	// Skills replaces the card's skill list; each entry uses the card's
	// skill fields (id, name, description, tags, examples, input_modes, output_modes).
	Skills []SkillConfig `yaml:"skills"`
}

// SkillConfig is one skill of a published card.
type SkillConfig struct {
	ID          string   `yaml:"id" json:"id"`
	Name        string   `yaml:"name" json:"name"`
	Description string   `yaml:"description" json:"description"`
	Tags        []string `yaml:"tags" json:"tags"`
	Examples    []string `yaml:"examples" json:"examples,omitempty"`
	InputModes  []string `yaml:"input_modes" json:"inputModes,omitempty"`
	OutputModes []string `yaml:"output_modes" json:"outputModes,omitempty"`
}

// BackendConfig says where a backend agent is and how to talk to it.
type BackendConfig struct {
	// URL is the backend's JSON-RPC endpoint. Required.
	URL string `yaml:"url"`
	// Dialect is the backend's A2A version: "0.2.5", "0.3", "1.0", or "auto"
	// to read it from the backend's agent card at start. Defaults to "auto".
	Dialect dialect.Version `yaml:"dialect"`
	// ConnectTimeout bounds dialing the backend. Defaults to 5s.
	ConnectTimeout time.Duration `yaml:"connect_timeout"`
	// ResponseHeaderTimeout bounds the wait for the backend's response
	// headers; a blocking send waits for the task, so this is long.
	// Defaults to 5m.
	ResponseHeaderTimeout time.Duration `yaml:"response_header_timeout"`
	// ResponseTimeout bounds a unary call's whole reply, head and body,
	// so that a backend that stalls or dribbles mid-reply is cut. Not
	// applied to streams. At least ResponseHeaderTimeout; defaults to 10m.
	ResponseTimeout time.Duration `yaml:"response_timeout"`
	// StreamIdleTimeout ends a stream whose backend sent nothing, not even a
	// keep-alive, for this long. Defaults to 5m.
	StreamIdleTimeout time.Duration `yaml:"stream_idle_timeout"`
	// MaxIdleConns is the size of the keep-alive pool to the backend.
	// Defaults to 256: a pool smaller than the calls and streams open at
	// once closes a connection at the end of each call beyond it and dials
	// one for the next (at 256 connections a pool of 64 cost 23% more CPU
	// per call), and an idle connection costs net/http's read and write
	// buffers (4 KiB and 1 KiB) and its two goroutines.
	MaxIdleConns int `yaml:"max_idle_conns" zero:"unset"`
	// ForwardAuthorization passes the caller's Authorization header on to
	// the backend. Defaults to false: the gateway consumes it.
	ForwardAuthorization bool `yaml:"forward_authorization"`
	// Headers are sent to the backend on every call, for the backend's own
	// credentials. Values come from a file or an environment variable,
	// never inline.
	Headers []HeaderConfig `yaml:"headers"`
	// BlockingViaStream serves a caller's blocking send from the backend's
	// stream: the gateway sends it as the backend's streaming send, keeps
	// the task the first event names at once (a retry from a caller that
	// timed out or left then learns the task while it runs, where it
	// otherwise waits for the first send's answer), and answers the task
	// the events add up to, as the blocking send would have been answered.
	// It costs the gateway several times a plain call's work per blocking
	// send, with either backend dialect (bench/README.md, 2026-12-02), for
	// the case of a retry alone. A backend whose card says it does not
	// stream, or that refuses the streaming send as a method it does not
	// serve, gets plain blocking sends. Defaults to false.
	BlockingViaStream bool `yaml:"blocking_via_stream"`
}

// HeaderConfig is one static header toward a backend.
type HeaderConfig = staticheader.Config

// SetDefaults fills unset fields with their documented defaults.
func (c *AgentConfig) SetDefaults() {
	c.Path = cmp.Or(c.Path, DefaultPath)
	c.MaxBodyBytes = cmp.Or(c.MaxBodyBytes, DefaultMaxBodyBytes)
	c.MaxReplyBytes = cmp.Or(c.MaxReplyBytes, DefaultMaxReplyBytes)
	c.MaxEventBytes = cmp.Or(c.MaxEventBytes, DefaultMaxEventBytes)
	c.MaxCallsPerCaller = cmp.Or(c.MaxCallsPerCaller, DefaultMaxCallsPerCaller)
	c.Card.RefreshInterval = cmp.Or(c.Card.RefreshInterval, DefaultCardRefresh)
	c.Card.FetchTimeout = cmp.Or(c.Card.FetchTimeout, DefaultCardFetchTimeout)
	c.Retries.SetDefaults()
	if c.Bindings == nil {
		for _, b := range dialect.Bindings {
			c.Bindings = append(c.Bindings, b.String())
		}
	}
	c.Backend.SetDefaults()
	for i := range c.Skills.Routes {
		c.Skills.Routes[i].Backend.SetDefaults()
	}
	if c.Auth != nil {
		c.Auth.SetDefaults()
	}
	c.Push.SetDefaults()
}

// SetDefaults fills unset fields with their documented defaults.
func (b *BackendConfig) SetDefaults() {
	b.Dialect = cmp.Or(b.Dialect, dialect.VersionAuto)
	b.ConnectTimeout = cmp.Or(b.ConnectTimeout, DefaultConnectTimeout)
	b.ResponseHeaderTimeout = cmp.Or(b.ResponseHeaderTimeout, DefaultResponseHeaderTimeout)
	b.ResponseTimeout = cmp.Or(b.ResponseTimeout, max(DefaultResponseTimeout, b.ResponseHeaderTimeout))
	b.StreamIdleTimeout = cmp.Or(b.StreamIdleTimeout, DefaultStreamIdleTimeout)
	b.MaxIdleConns = cmp.Or(b.MaxIdleConns, DefaultMaxIdleConns)
}

// Validate reports every problem with c at once.
func (c *AgentConfig) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if c.Name == "" {
		bad("name is required")
	}
	if err := checkPath(c.Path); err != nil {
		bad("path %q %v", c.Path, err)
	}
	if err := checkURL(c.PublicURL); err != nil {
		bad("public_url: %v", err)
	}
	if c.MaxBodyBytes < 0 || c.MaxReplyBytes < 0 || c.MaxEventBytes < 0 {
		bad("max_body_bytes, max_reply_bytes and max_event_bytes must not be negative")
	}
	for _, n := range []struct {
		name string
		v    int64
	}{{"max_body_bytes", c.MaxBodyBytes}, {"max_reply_bytes", c.MaxReplyBytes}, {"max_event_bytes", int64(c.MaxEventBytes)}} {
		if err := checkMaxBytes(n.name, n.v); err != nil {
			errs = append(errs, err)
		}
	}
	if n := c.MaxCallsPerCaller; n < 1 || n > MaxMaxCallsPerCaller {
		bad("max_calls_per_caller (%d) is not between 1 and %d: it bounds the calls one caller may have in flight at once", n, MaxMaxCallsPerCaller)
	}
	for i, p := range c.TrustedProxies {
		if _, err := parseTrustedProxy(p); err != nil {
			bad("trusted_proxies[%d] (%q) is neither an IP address nor a CIDR network such as 10.0.0.0/8", i, p)
		}
	}
	for i, sk := range c.Card.Skills {
		if sk.ID == "" || sk.Name == "" {
			bad("card.skills[%d]: id and name are required", i)
		}
	}
	if c.Card.RefreshInterval < 0 {
		bad("card.refresh_interval must not be negative")
	}
	if err := CheckMaxWait("card.refresh_interval", c.Card.RefreshInterval); err != nil {
		errs = append(errs, err)
	}
	if t := c.Card.FetchTimeout; t < 0 || t > MaxCardFetchTimeout {
		bad("card.fetch_timeout (%s) is not between 0 and %s: the start and every reload wait for an agent's first card up to it", t, MaxCardFetchTimeout)
	}
	if err := c.Retries.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("retries: %w", err))
	}
	if c.Bindings != nil && len(c.Bindings) == 0 {
		bad("bindings is empty: list at least one of jsonrpc, http_json, grpc (or leave it out for all three)")
	}
	for i, name := range c.Bindings {
		if _, ok := dialect.ParseBinding(name); !ok {
			bad("bindings[%d] %q is not a binding: want jsonrpc, http_json or grpc", i, name)
		} else if slices.Index(c.Bindings, name) < i {
			bad("bindings[%d] %q is listed twice", i, name)
		}
	}
	if c.GRPCListen != "" && !c.Serves(dialect.GRPC) {
		bad("grpc_listen is set but bindings leaves grpc out")
	}
	if c.GRPCListen == "" && (c.GRPCTLS != nil || c.GRPCPublicAddress != "") {
		bad("grpc_tls and grpc_public_address need grpc_listen")
	}
	if c.GRPCTLS != nil {
		if err := c.GRPCTLS.Validate(); err != nil {
			bad("grpc_tls: %v", err)
		}
	}
	if c.GRPCPublicAddress != "" {
		if host, port, err := net.SplitHostPort(c.GRPCPublicAddress); err != nil || host == "" || port == "" {
			bad("grpc_public_address %q is not host:port", c.GRPCPublicAddress)
		}
	}
	if err := c.Backend.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("backend: %w", err))
	}
	seen := map[string]bool{}
	for i, r := range c.Skills.Routes {
		if r.Skill == "" {
			bad("skills.routes[%d]: skill is required", i)
		}
		if seen[r.Skill] {
			bad("skills.routes[%d]: skill %q is routed twice", i, r.Skill)
		}
		seen[r.Skill] = true
		if err := r.Backend.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("skills.routes[%d] (%s).backend: %w", i, r.Skill, err))
		}
	}
	if c.Auth != nil {
		if err := c.Auth.Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	if err := c.Push.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("push: %w", err))
	}
	return errors.Join(errs...)
}

// Validate reports every problem with b at once.
func (b *BackendConfig) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if err := checkURL(b.URL); err != nil {
		bad("url: %v", err)
	}
	known := false
	for _, v := range dialect.Versions {
		known = known || b.Dialect == v
	}
	if !known {
		bad("dialect %q is not one of auto, 0.2.5, 0.3, 1.0", b.Dialect)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"connect_timeout", b.ConnectTimeout}, {"response_header_timeout", b.ResponseHeaderTimeout}, {"response_timeout", b.ResponseTimeout}, {"stream_idle_timeout", b.StreamIdleTimeout}} {
		if d.v < 0 {
			bad("%s must not be negative", d.name)
		}
		if err := CheckMaxWait(d.name, d.v); err != nil {
			errs = append(errs, err)
		}
	}
	if b.MaxIdleConns < 0 || b.MaxIdleConns > MaxMaxIdleConns {
		bad("max_idle_conns (%d) is not between 0 and %d", b.MaxIdleConns, MaxMaxIdleConns)
	}
	if b.ResponseTimeout < b.ResponseHeaderTimeout {
		bad("response_timeout (%s) must be at least response_header_timeout (%s): it bounds the whole reply, head included", b.ResponseTimeout, b.ResponseHeaderTimeout)
	}
	for i, h := range b.Headers {
		field := fmt.Sprintf("headers[%d]", i)
		if strings.EqualFold(h.Name, dialect.HeaderVersion) || strings.EqualFold(h.Name, "Content-Length") || strings.EqualFold(h.Name, "Content-Type") {
			bad("%s: %s is set by the gateway", field, h.Name)
		}
		if err := h.Validate(field); err != nil {
			errs = append(errs, err)
			continue
		}
		// The value is read now, not first at a call: a missing secret
		// or one that would split the request's head is refused at load.
		if _, err := h.Value(); err != nil {
			bad("%s: %v", field, err)
		}
	}
	return errors.Join(errs...)
}

// NestedPathConflict says why an agent at child cannot be published below
// an agent at parent (both as configured), or nil: a child whose first
// segment below the parent begins one of the parent's routes (its REST
// routes, cards, extended card, push relay) takes those routes from it. A
// child at any other segment only takes the parent's tenant of that name.
func NestedPathConflict(parent, child string) error {
	p, c := strings.TrimSuffix(parent, "/"), strings.TrimSuffix(child, "/")
	rel, ok := strings.CutPrefix(c, p+"/")
	if !ok {
		return nil
	}
	seg, _, _ := strings.Cut(rel, "/")
	switch {
	case rest.RouteSegment(seg), seg == ".well-known", seg == "agent", seg == "push":
		return fmt.Errorf("lies on the routes of the agent at %q (%s/%s...): it would take them from that agent", parent, p, seg)
	}
	return nil
}

// checkPath refuses what a path may not hold: it is served as a literal
// ServeMux pattern, where braces would make wildcards (or panic), and a
// path that is not clean would never match.
func checkPath(p string) error {
	if !strings.HasPrefix(p, "/") {
		return errors.New("must start with /")
	}
	for _, r := range p {
		switch {
		case r < 0x20 || r == 0x7f:
			return errors.New("holds a control byte")
		case strings.ContainsRune("{} ?#", r):
			return fmt.Errorf("may not hold %q: a path is literal, with no wildcards, spaces, query or fragment", r)
		}
	}
	clean := path.Clean(p)
	if strings.HasSuffix(p, "/") && clean != "/" {
		clean += "/"
	}
	if clean != p {
		return fmt.Errorf("is not clean (no empty, . or .. segments): write %q", clean)
	}
	return nil
}

func checkURL(s string) error {
	if s == "" {
		return errors.New("is required")
	}
	u, err := url.Parse(s)
	if err != nil {
		return err
	}
	// A password in the URL is a secret written inline: it would be in
	// every log line that names the URL and, in public_url, in every
	// published card. The errors below therefore never quote it.
	if u.User != nil {
		return fmt.Errorf("%q carries credentials (user:password@), which would be logged and published: give a backend's in backend.headers[] (value_file or value_env)", u.Redacted())
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%q must be an http or https URL", s)
	}
	if u.Host == "" {
		return fmt.Errorf("%q has no host", s)
	}
	return nil
}

// Defaults of RetriesConfig.
const (
	DefaultRetryWindow          = 24 * time.Hour
	DefaultRetryMaxMessageBytes = 64 << 10
)

// RetriesConfig sets how a send sent again (same caller, same
// Idempotency-Key header or else message id) is answered from the first.
type RetriesConfig struct {
	// Window is how long a send's key is remembered. Defaults to 24h, or
	// the task index's TTL if shorter; never longer than that TTL.
	Window time.Duration `yaml:"window"`
	// MaxMessageBytes bounds a direct message answer kept for retries; a
	// larger one is not kept, and its retry is told so. Defaults to 64 KiB.
	MaxMessageBytes int64 `yaml:"max_message_bytes" zero:"unset"`
}

// SetDefaults fills unset fields with their documented defaults.
func (r *RetriesConfig) SetDefaults() {
	r.Window = cmp.Or(r.Window, DefaultRetryWindow)
	r.MaxMessageBytes = cmp.Or(r.MaxMessageBytes, DefaultRetryMaxMessageBytes)
}

// Validate reports every problem with r at once. The bound by the task
// TTL is checked where both are known (the gateway's config).
func (r *RetriesConfig) Validate() error {
	var errs []error
	if r.Window < time.Second {
		errs = append(errs, fmt.Errorf("window (%s) must be at least 1s", r.Window))
	}
	if r.MaxMessageBytes < 0 {
		errs = append(errs, errors.New("max_message_bytes must not be negative"))
	}
	if err := checkMaxBytes("max_message_bytes", r.MaxMessageBytes); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// CheckMaxWait refuses a wait named name longer than MaxWait.
func CheckMaxWait(name string, v time.Duration) error {
	if v > MaxWait {
		return fmt.Errorf("%s (%s) must be at most %s: a longer wait is no bound at all", name, v, MaxWait)
	}
	return nil
}

// checkMaxBytes refuses a size named name larger than MaxBytes.
func checkMaxBytes(name string, v int64) error {
	if v > MaxBytes {
		return fmt.Errorf("%s (%d) must be at most %d (1 GiB): what it bounds is held in memory whole", name, v, MaxBytes)
	}
	return nil
}
