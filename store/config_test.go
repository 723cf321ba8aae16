package store

import (
	"strings"
	"testing"
	"time"
)

func TestMemoryConfigDefaults(t *testing.T) {
	t.Parallel()
	var c MemoryConfig
	c.SetDefaults()
	if c.MaxTasks != 100000 || c.MaxTasksPerOwner != 10000 || c.TTL != 24*time.Hour {
		t.Errorf("SetDefaults() = %+v", c)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("Validate() of the defaults = %v", err)
	}
	set := MemoryConfig{MaxTasks: 7, TTL: time.Hour}
	set.SetDefaults()
	if set.MaxTasks != 7 || set.TTL != time.Hour || set.MaxTasksPerOwner != 7 {
		t.Errorf("SetDefaults() overwrote set fields, or gave a share past max_tasks: %+v", set)
	}
	over := MemoryConfig{MaxTasks: 7, MaxTasksPerOwner: 8, TTL: time.Hour}
	wantProblems(t, over.Validate(), "max_tasks_per_owner")
}

func TestRedisConfigDefaults(t *testing.T) {
	t.Parallel()
	var c RedisConfig
	c.SetDefaults()
	want := RedisConfig{Address: "127.0.0.1:6379", KeyPrefix: "a2agw:", TTL: 24 * time.Hour,
		DialTimeout: 2 * time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second}
	if c.Address != want.Address || c.KeyPrefix != want.KeyPrefix || c.TTL != want.TTL || c.DB != 0 ||
		c.DialTimeout != want.DialTimeout || c.ReadTimeout != want.ReadTimeout || c.WriteTimeout != want.WriteTimeout ||
		c.MaxTasksPerOwner != 10000 {
		t.Errorf("SetDefaults() = %+v, want %+v", c, want)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("Validate() of the defaults = %v", err)
	}
}

// The Validate tests give several problems at once: every one must be
// reported, not just the first.
func TestMemoryConfigValidate(t *testing.T) {
	t.Parallel()
	c := MemoryConfig{MaxTasks: -5, TTL: 10 * time.Millisecond}
	wantProblems(t, c.Validate(), "max_tasks", "max_tasks_per_owner", "ttl")
}

func TestRedisConfigValidate(t *testing.T) {
	t.Parallel()
	c := RedisConfig{
		Address:      "localhost",
		PasswordFile: "/run/secrets/redis",
		PasswordEnv:  "REDIS_PASSWORD",
		DB:           -1,
		TTL:          -time.Second,
		DialTimeout:  -1,
		ReadTimeout:  -1,
		WriteTimeout: -1,
	}
	wantProblems(t, c.Validate(), "address", "password_file and password_env", "db", "key_prefix",
		"ttl", "dial_timeout", "read_timeout", "write_timeout", "max_tasks_per_owner")
	ok := RedisConfig{Address: "[::1]:6380", KeyPrefix: "p:", TTL: time.Minute, DialTimeout: 1, ReadTimeout: 1, WriteTimeout: 1, MaxTasksPerOwner: 1}
	if err := ok.Validate(); err != nil {
		t.Errorf("Validate(%+v) = %v", ok, err)
	}
}

// TestConfigsRefuseAbsurdBounds: a value past a knob's upper bound, which
// would turn its bound off, is refused naming the knob; the bounds
// themselves are accepted.
func TestConfigsRefuseAbsurdBounds(t *testing.T) {
	t.Parallel()
	memory := MemoryConfig{MaxTasks: MaxMaxTasks + 1, MaxTasksPerOwner: 1, TTL: 8760 * time.Hour}
	wantProblems(t, memory.Validate(), "max_tasks", "ttl")
	if err := memory.Validate(); !strings.Contains(err.Error(), "ttl: must be at most 720h0m0s (30 days), got 8760h0m0s") ||
		!strings.Contains(err.Error(), "max_tasks: must be at most 10000000, got 10000001") {
		t.Errorf("the problems must name the bounds: %v", err)
	}
	atBounds := MemoryConfig{MaxTasks: MaxMaxTasks, MaxTasksPerOwner: MaxMaxTasks, TTL: MaxTTL}
	if err := atBounds.Validate(); err != nil {
		t.Errorf("Validate(%+v) = %v", atBounds, err)
	}
	redis := RedisConfig{Address: "redis:6379", KeyPrefix: strings.Repeat("p", MaxKeyPrefixBytes+1), TTL: MaxTTL + time.Hour,
		DialTimeout: time.Hour, ReadTimeout: time.Hour, WriteTimeout: time.Hour, MaxTasksPerOwner: MaxMaxTasks + 1, MinReplicaAcks: 1000}
	wantProblems(t, redis.Validate(), "key_prefix", "ttl", "dial_timeout", "read_timeout", "write_timeout", "max_tasks_per_owner", "min_replica_acks")
	if err := redis.Validate(); !strings.Contains(err.Error(), "read_timeout: must be at most 1m0s, got 1h0m0s") ||
		!strings.Contains(err.Error(), "min_replica_acks: must be at most 16, got 1000") ||
		!strings.Contains(err.Error(), "key_prefix: must be at most 128 bytes, got 129") {
		t.Errorf("the problems must name the bounds: %v", err)
	}
	redisAtBounds := RedisConfig{Address: "redis:6379", KeyPrefix: strings.Repeat("p", MaxKeyPrefixBytes), TTL: MaxTTL,
		DialTimeout: MaxRedisTimeout, ReadTimeout: MaxRedisTimeout, WriteTimeout: MaxRedisTimeout, MaxTasksPerOwner: MaxMaxTasks, MinReplicaAcks: MaxMinReplicaAcks}
	if err := redisAtBounds.Validate(); err != nil {
		t.Errorf("Validate(%+v) = %v", redisAtBounds, err)
	}
}

func wantProblems(t *testing.T, err error, fields ...string) {
	t.Helper()
	if err == nil {
		t.Fatal("Validate() = nil")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != len(fields) {
		t.Errorf("Validate() reported %d problems, want %d:\n%v", len(lines), len(fields), err)
	}
	for _, f := range fields {
		if !strings.Contains(err.Error(), f+":") {
			t.Errorf("Validate() = %v\nwant a problem with %q", err, f)
		}
	}
}

func TestRedisConfigTopologies(t *testing.T) {
	t.Parallel()
	valid := func(c RedisConfig) *RedisConfig {
		c.SetDefaults()
		return &c
	}
	for _, c := range []RedisConfig{
		{},
		{Addresses: []string{"redis:6379"}},
		{Mode: "cluster", Addresses: []string{"a:7000", "b:7000"}},
		{Mode: "sentinel", Addresses: []string{"s1:26379"}, MasterName: "idx", SentinelPasswordEnv: "X"},
		{TLS: RedisTLSConfig{Enabled: true, CAFile: "ca.pem", CertFile: "c.pem", KeyFile: "k.pem", ServerName: "redis"}},
		{TLS: RedisTLSConfig{Enabled: true, InsecureSkipVerify: true}},
	} {
		if err := valid(c).Validate(); err != nil {
			t.Errorf("Validate(%+v) = %v", c, err)
		}
	}
	wantProblems(t, valid(RedisConfig{Address: "a:1", Addresses: []string{"b:1"}}).Validate(), "address and addresses")
	wantProblems(t, valid(RedisConfig{Mode: "ring"}).Validate(), "mode")
	wantProblems(t, valid(RedisConfig{Mode: "cluster", Address: "a:1", DB: 2, KeyPrefix: "{x}", MinReplicaAcks: 1}).Validate(),
		"address", "addresses", "db", "key_prefix", "min_replica_acks")
	wantProblems(t, valid(RedisConfig{MinReplicaAcks: -1}).Validate(), "min_replica_acks")
	wantProblems(t, valid(RedisConfig{Mode: "sentinel", Addresses: []string{"nope"}}).Validate(), "master_name", "addresses")
	wantProblems(t, valid(RedisConfig{MasterName: "m", SentinelPasswordFile: "f", SentinelPasswordEnv: "E"}).Validate(),
		"master_name", "sentinel_password_file", "sentinel_password_env", "sentinel_password_file and sentinel_password_env")
	wantProblems(t, valid(RedisConfig{TLS: RedisTLSConfig{CAFile: "ca.pem", InsecureSkipVerify: true}}).Validate(),
		"tls.ca_file", "tls.insecure_skip_verify")
	wantProblems(t, valid(RedisConfig{TLS: RedisTLSConfig{Enabled: true, CertFile: "c.pem", InsecureSkipVerify: true, ServerName: "x"}}).Validate(),
		"tls.cert_file and tls.key_file", "tls.insecure_skip_verify")
}
