package push

import (
	"cmp"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"time"
)

// Defaults of Config.
const (
	DefaultMaxAttempts  = 5
	DefaultTimeout      = 10 * time.Second
	DefaultQueueSize    = 1000
	DefaultWorkers      = 8
	DefaultMaxBodyBytes = 4 << 20
	DefaultQueueBytes   = 64 << 20
	DefaultBackoffBase  = 500 * time.Millisecond
	DefaultBackoffMax   = 30 * time.Second
)

// Upper bounds of Config: past them a value is a typo that turns a bound
// off, not a tuning, and is refused.
const (
	// MaxMaxAttempts bounds max_attempts: every attempt holds the delivery's
	// queue slot for another backoff, so a delivery retried without end
	// keeps its slot from the deliveries behind it.
	MaxMaxAttempts = 100
	// MaxTimeout bounds timeout: an attempt holds one of the workers, and a
	// receiver that takes longer than this is not coming back.
	MaxTimeout = 5 * time.Minute
	// MaxBackoff bounds backoff_base and backoff_max: a longer wait
	// between attempts delivers a notification after the caller stopped
	// caring for it, while holding its queue slot.
	MaxBackoff = time.Hour
	// MaxQueueSize bounds queue_size: a queued delivery holds its body,
	// so a larger queue can hold more memory than the gateway is given.
	MaxQueueSize = 100000
	// MaxQueueBytes bounds queue_bytes: past it the bound no longer keeps
	// the queue within the memory a gateway is given.
	MaxQueueBytes = 16 << 30
	// MaxWorkers bounds workers: each is a goroutine started with the
	// agent, and an outbound connection while it delivers.
	MaxWorkers = 1000
	// MaxBodyBytes bounds max_body_bytes: a delivery is held in memory
	// whole, as a stream event is.
	MaxBodyBytes = 1 << 30
)

// Config is an agent's push relay: agents[].push in the YAML.
type Config struct {
	// Enabled turns the relay on. Defaults to on when the backend's card
	// advertises push notifications.
	Enabled *bool `yaml:"enabled"`
	// MaxAttempts bounds the POSTs of one delivery, the first included.
	// Defaults to 5.
	MaxAttempts int `yaml:"max_attempts" zero:"unset"`
	// Timeout bounds one attempt, from dialling to the end of the
	// response. Defaults to 10s.
	Timeout time.Duration `yaml:"timeout"`
	// QueueSize bounds the deliveries waiting or in flight for the agent;
	// beyond it the receiver answers the backend 503 (a notification for
	// several webhooks is taken whole or not at all, and whole into an
	// empty queue whatever its size). One task's deliveries to one URL
	// hold at most QueueSize/Workers places, at least 2 (when QueueSize
	// allows) so that a task's next delivery can wait behind the one in
	// flight. Defaults to 1000.
	QueueSize int `yaml:"queue_size" zero:"unset"`
	// QueueBytes bounds the bodies of the deliveries waiting or in flight
	// for the agent, as QueueSize bounds their count: QueueSize deliveries
	// of MaxBodyBytes each would hold gigabytes. Defaults to 64 MiB, or
	// MaxBodyBytes when that is larger.
	QueueBytes int64 `yaml:"queue_bytes" zero:"unset"`
	// Workers bounds the deliveries in flight at once (each to a different
	// task). Defaults to 8.
	Workers int `yaml:"workers" zero:"unset"`
	// MaxBodyBytes bounds a delivery the backend posts to the gateway.
	// Defaults to 4 MiB, as a stream event.
	MaxBodyBytes int64 `yaml:"max_body_bytes" zero:"unset"`
	// BackoffBase is the wait before the first retry, doubled for each
	// next one, with full jitter. Defaults to 500ms.
	BackoffBase time.Duration `yaml:"backoff_base"`
	// BackoffMax caps one wait between attempts, a receiver's Retry-After
	// included. Defaults to 30s.
	BackoffMax time.Duration `yaml:"backoff_max"`
	// AllowPrivateNetworks allows webhooks into loopback, private,
	// link-local, unique-local and CGNAT ranges. Defaults to false. Cloud
	// metadata addresses stay refused.
	AllowPrivateNetworks bool `yaml:"allow_private_networks"`
	// AllowedHosts are host names (exact, case-insensitive) allowed even
	// when they resolve into a private range, for receivers inside the
	// cluster.
	AllowedHosts []string `yaml:"allowed_hosts"`
	// AllowedCIDRs are address ranges ("10.1.0.0/16", or one address)
	// allowed even though they are private.
	AllowedCIDRs []string `yaml:"allowed_cidrs"`
}

// SetDefaults fills the unset fields with their defaults.
func (c *Config) SetDefaults() {
	c.MaxAttempts = cmp.Or(c.MaxAttempts, DefaultMaxAttempts)
	c.Timeout = cmp.Or(c.Timeout, DefaultTimeout)
	c.QueueSize = cmp.Or(c.QueueSize, DefaultQueueSize)
	c.Workers = cmp.Or(c.Workers, DefaultWorkers)
	c.MaxBodyBytes = cmp.Or(c.MaxBodyBytes, DefaultMaxBodyBytes)
	c.QueueBytes = cmp.Or(c.QueueBytes, max(DefaultQueueBytes, c.MaxBodyBytes))
	c.BackoffBase = cmp.Or(c.BackoffBase, DefaultBackoffBase)
	c.BackoffMax = cmp.Or(c.BackoffMax, DefaultBackoffMax)
}

// EnabledFor reports whether the relay is on for a backend whose card does
// or does not advertise push notifications.
func (c *Config) EnabledFor(cardAdvertisesPush bool) bool {
	if c.Enabled != nil {
		return *c.Enabled
	}
	return cardAdvertisesPush
}

// Validate reports every problem of c, joined. Call it after SetDefaults.
func (c *Config) Validate() error {
	var problems []error
	positive := func(name string, v int64, shown any) {
		if v <= 0 {
			problems = append(problems, fmt.Errorf("%s: must be positive, got %v", name, shown))
		}
	}
	positive("max_attempts", int64(c.MaxAttempts), c.MaxAttempts)
	positive("timeout", int64(c.Timeout), c.Timeout)
	positive("queue_size", int64(c.QueueSize), c.QueueSize)
	positive("queue_bytes", c.QueueBytes, c.QueueBytes)
	positive("workers", int64(c.Workers), c.Workers)
	positive("max_body_bytes", c.MaxBodyBytes, c.MaxBodyBytes)
	positive("backoff_base", int64(c.BackoffBase), c.BackoffBase)
	positive("backoff_max", int64(c.BackoffMax), c.BackoffMax)
	atMost := func(name string, v, limit int64, shown, shownLimit any, why string) {
		if v > limit {
			problems = append(problems, fmt.Errorf("%s: must be at most %v, got %v: %s", name, shownLimit, shown, why))
		}
	}
	atMost("max_attempts", int64(c.MaxAttempts), MaxMaxAttempts, c.MaxAttempts, MaxMaxAttempts, "each attempt holds the delivery's queue slot for another backoff")
	atMost("timeout", int64(c.Timeout), int64(MaxTimeout), c.Timeout, MaxTimeout, "an attempt holds a worker as long")
	atMost("queue_size", int64(c.QueueSize), MaxQueueSize, c.QueueSize, MaxQueueSize, "each queued delivery holds its body in memory")
	atMost("queue_bytes", c.QueueBytes, MaxQueueBytes, c.QueueBytes, "17179869184 (16 GiB)", "each queued delivery holds its body in memory")
	atMost("workers", int64(c.Workers), MaxWorkers, c.Workers, MaxWorkers, "each is a goroutine started with the agent")
	atMost("max_body_bytes", c.MaxBodyBytes, MaxBodyBytes, c.MaxBodyBytes, "1073741824 (1 GiB)", "a delivery is held in memory whole")
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"backoff_base", c.BackoffBase}, {"backoff_max", c.BackoffMax}} {
		atMost(d.name, int64(d.v), int64(MaxBackoff), d.v, MaxBackoff, "a longer wait holds the delivery's queue slot past any caller's interest in it")
	}
	if c.QueueBytes > 0 && c.MaxBodyBytes > 0 && c.QueueBytes < c.MaxBodyBytes {
		problems = append(problems, fmt.Errorf("queue_bytes: must be at least max_body_bytes (%d), got %d: a delivery the receiver takes must fit in the queue", c.MaxBodyBytes, c.QueueBytes))
	}
	if c.BackoffBase > 0 && c.BackoffMax > 0 && c.BackoffMax < c.BackoffBase {
		problems = append(problems, fmt.Errorf("backoff_max: must be at least backoff_base (%s), got %s", c.BackoffBase, c.BackoffMax))
	}
	for i, h := range c.AllowedHosts {
		if h == "" || strings.ContainsAny(h, "/:*@ ") {
			problems = append(problems, fmt.Errorf("allowed_hosts[%d]: want a host name such as receiver.internal, got %q", i, h))
		} else if metadataHosts[normalizeHost(h)] {
			problems = append(problems, fmt.Errorf("allowed_hosts[%d]: %s is a cloud metadata endpoint, which is never allowed", i, h))
		}
	}
	for i, s := range c.AllowedCIDRs {
		if _, err := parseCIDR(s); err != nil {
			problems = append(problems, fmt.Errorf("allowed_cidrs[%d]: %w", i, err))
		}
	}
	return errors.Join(problems...)
}

// Policy returns the webhook target policy c sets. Call it after Validate.
func (c *Config) Policy() (*Policy, error) {
	p := &Policy{AllowPrivateNetworks: c.AllowPrivateNetworks, AllowedHosts: c.AllowedHosts}
	for i, s := range c.AllowedCIDRs {
		pfx, err := parseCIDR(s)
		if err != nil {
			return nil, fmt.Errorf("allowed_cidrs[%d]: %w", i, err)
		}
		p.AllowedCIDRs = append(p.AllowedCIDRs, pfx)
	}
	return p, nil
}

// parseCIDR reads a range, or one address as a range of one.
func parseCIDR(s string) (netip.Prefix, error) {
	s = strings.TrimSpace(s)
	if !strings.Contains(s, "/") {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("want a CIDR range such as 10.1.0.0/16 or an address, got %q", s)
		}
		return netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()), nil
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("want a CIDR range such as 10.1.0.0/16 or an address, got %q", s)
	}
	return p.Masked(), nil
}
