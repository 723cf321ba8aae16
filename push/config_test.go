package push

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

func TestConfigDefaults(t *testing.T) {
	var c Config
	c.SetDefaults()
	if err := c.Validate(); err != nil {
		t.Fatalf("defaults do not validate: %v", err)
	}
	if c.MaxAttempts != 5 || c.Timeout != DefaultTimeout || c.QueueSize != 1000 || c.Workers != 8 ||
		c.MaxBodyBytes != 4<<20 || c.QueueBytes != 64<<20 || c.BackoffBase != DefaultBackoffBase || c.BackoffMax != DefaultBackoffMax {
		t.Errorf("defaults: %+v", c)
	}
	if c.AllowPrivateNetworks {
		t.Error("allow_private_networks defaults to true")
	}
	if !c.EnabledFor(true) || c.EnabledFor(false) {
		t.Error("enabled does not follow the card by default")
	}
	off := false
	c.Enabled = &off
	if c.EnabledFor(true) {
		t.Error("enabled: false did not turn the relay off")
	}
}

func TestConfigYAML(t *testing.T) {
	src := `
enabled: true
max_attempts: 3
timeout: 2s
queue_size: 10
max_body_bytes: 1024
allow_private_networks: false
allowed_hosts: [receiver.internal]
allowed_cidrs: [10.1.0.0/16, 192.168.7.9, "fd00:1::/32"]
`
	var c Config
	dec := yaml.NewDecoder(strings.NewReader(src))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		t.Fatal(err)
	}
	c.SetDefaults()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	p, err := c.Policy()
	if err != nil {
		t.Fatal(err)
	}
	want := []netip.Prefix{netip.MustParsePrefix("10.1.0.0/16"), netip.MustParsePrefix("192.168.7.9/32"), netip.MustParsePrefix("fd00:1::/32")}
	if len(p.AllowedCIDRs) != len(want) {
		t.Fatalf("cidrs %v", p.AllowedCIDRs)
	}
	for i := range want {
		if p.AllowedCIDRs[i] != want[i] {
			t.Errorf("cidr %d = %v, want %v", i, p.AllowedCIDRs[i], want[i])
		}
	}
	if *c.Enabled != true || c.MaxAttempts != 3 || c.QueueSize != 10 || p.AllowedHosts[0] != "receiver.internal" {
		t.Errorf("decoded %+v", c)
	}
}

func TestConfigValidateReportsEveryProblem(t *testing.T) {
	c := Config{MaxAttempts: -1, Timeout: -1, QueueSize: -2, QueueBytes: -1, Workers: -1, MaxBodyBytes: -1,
		BackoffBase: 2e9, BackoffMax: 1e9,
		AllowedHosts: []string{"http://x/", "metadata.google.internal"},
		AllowedCIDRs: []string{"10.0.0.0/33", "nope"}}
	c.SetDefaults()
	wantProblems(t, c.Validate(), "max_attempts:", "timeout:", "queue_size:", "workers:",
		"queue_bytes: must be positive", "max_body_bytes:",
		"backoff_max: must be at least backoff_base", "allowed_hosts[0]:", "allowed_hosts[1]: metadata.google.internal is a cloud metadata endpoint",
		"allowed_cidrs[0]:", "allowed_cidrs[1]:")
}

// TestConfigQueueBytesHoldsADelivery: a queue_bytes below max_body_bytes
// would refuse a delivery the receiver took, so it is refused; left unset,
// it grows with max_body_bytes.
func TestConfigQueueBytesHoldsADelivery(t *testing.T) {
	c := Config{QueueBytes: 1024, MaxBodyBytes: 2048}
	c.SetDefaults()
	wantProblems(t, c.Validate(), "queue_bytes: must be at least max_body_bytes (2048), got 1024")
	c = Config{MaxBodyBytes: 128 << 20}
	c.SetDefaults()
	if err := c.Validate(); err != nil || c.QueueBytes != 128<<20 {
		t.Errorf("max_body_bytes 128 MiB, queue_bytes unset: %d, %v; want 128 MiB", c.QueueBytes, err)
	}
}

// wantProblems fails unless err reports each of problems.
func wantProblems(t *testing.T, err error, problems ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one reporting %q", problems)
	}
	for _, want := range problems {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

// TestConfigValidateRefusesAbsurdBounds: a value past a knob's upper bound,
// which would turn its bound off, is refused naming the knob; the bound
// itself is accepted.
func TestConfigValidateRefusesAbsurdBounds(t *testing.T) {
	atBounds := Config{MaxAttempts: MaxMaxAttempts, Timeout: MaxTimeout, QueueSize: MaxQueueSize, QueueBytes: MaxQueueBytes, Workers: MaxWorkers,
		MaxBodyBytes: MaxBodyBytes, BackoffBase: MaxBackoff, BackoffMax: MaxBackoff}
	if err := atBounds.Validate(); err != nil {
		t.Fatalf("the bounds themselves: %v", err)
	}
	c := Config{MaxAttempts: 1000000, Timeout: 8760 * time.Hour, QueueSize: 1 << 30, QueueBytes: 1 << 40, Workers: 1000000,
		MaxBodyBytes: 1 << 40, BackoffBase: 8760 * time.Hour, BackoffMax: 8760 * time.Hour}
	wantProblems(t, c.Validate(),
		"max_attempts: must be at most 100, got 1000000",
		"timeout: must be at most 5m0s, got 8760h0m0s",
		"queue_size: must be at most 100000, got 1073741824",
		"queue_bytes: must be at most 17179869184 (16 GiB), got 1099511627776",
		"workers: must be at most 1000, got 1000000",
		"max_body_bytes: must be at most 1073741824 (1 GiB), got 1099511627776",
		"backoff_base: must be at most 1h0m0s, got 8760h0m0s",
		"backoff_max: must be at most 1h0m0s, got 8760h0m0s",
	)
}
