package store

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"
)

// Defaults of MemoryConfig and RedisConfig.
const (
	DefaultMaxTasks = 100000
	// DefaultMaxTasksPerOwner is a tenth of DefaultMaxTasks: ten busy
	// principals cannot fill the index between them with unfinished work.
	DefaultMaxTasksPerOwner = 10000
	DefaultTTL              = 24 * time.Hour
	DefaultRedisAddress     = "127.0.0.1:6379"
	DefaultKeyPrefix        = "a2agw:"
	DefaultDialTimeout      = 2 * time.Second
	DefaultReadTimeout      = time.Second
	DefaultWriteTimeout     = time.Second
)

// minTTL keeps a task alive long enough to be listed after it was created.
const minTTL = time.Second

// Upper bounds of MemoryConfig and RedisConfig: past them a value is a
// typo that turns a bound off, not a tuning, and is refused.
const (
	// MaxTTL bounds ttl: Redis holds every task until it expires, with no
	// count to evict by, and a task kept for months is one no caller polls.
	MaxTTL = 30 * 24 * time.Hour
	// MaxMaxTasks bounds max_tasks and max_tasks_per_owner: every task
	// holds index memory, in the gateway or in Redis, and a bound larger
	// than any instance is given holds no memory back.
	MaxMaxTasks = 10000000
	// MaxRedisTimeout bounds dial_timeout, read_timeout and write_timeout:
	// calls wait on the index, so a Redis that stalls holds each call, and
	// its caller, for as long.
	MaxRedisTimeout = time.Minute
	// MaxMinReplicaAcks bounds min_replica_acks: every task write waits
	// for that many replicas and fails without them, and a primary keeps
	// fewer replicas than this.
	MaxMinReplicaAcks = 16
	// MaxKeyPrefixBytes bounds key_prefix: every key the gateway writes
	// carries it, in Redis's memory and on every command.
	MaxKeyPrefixBytes = 128
)

// MemoryConfig configures the in-process task index, for a single gateway
// replica.
type MemoryConfig struct {
	// MaxTasks bounds the number of tasks kept; when the index is full, the
	// final task (completed, canceled, failed, rejected) updated least
	// recently is dropped to make room, and with none a new task is
	// refused. Defaults to 100000.
	MaxTasks int `yaml:"max_tasks" zero:"unset"`
	// MaxTasksPerOwner bounds the tasks one principal holds in one agent;
	// past it, its own final task updated least recently is dropped, and
	// with none its new task is refused. Tasks recorded with authentication
	// off are bounded by MaxTasks alone. Defaults to 10000, or MaxTasks if
	// smaller.
	MaxTasksPerOwner int `yaml:"max_tasks_per_owner" zero:"unset"`
	// TTL is how long a task is kept after its last update. Defaults to 24h.
	TTL time.Duration `yaml:"ttl"`

	now func() time.Time // tests inject a clock; time.Now otherwise
}

// SetDefaults fills the unset fields with their defaults.
func (c *MemoryConfig) SetDefaults() {
	c.MaxTasks = cmp.Or(c.MaxTasks, DefaultMaxTasks)
	c.MaxTasksPerOwner = cmp.Or(c.MaxTasksPerOwner, min(DefaultMaxTasksPerOwner, max(c.MaxTasks, 1)))
	c.TTL = cmp.Or(c.TTL, DefaultTTL)
}

// Validate reports every problem of c, joined. Call it after SetDefaults.
func (c *MemoryConfig) Validate() error {
	var problems []error
	if c.MaxTasks < 1 {
		problems = append(problems, fmt.Errorf("max_tasks: must be at least 1, got %d", c.MaxTasks))
	}
	if c.MaxTasks > MaxMaxTasks {
		problems = append(problems, maxTasksTooLarge("max_tasks", c.MaxTasks))
	}
	switch {
	case c.MaxTasksPerOwner < 1:
		problems = append(problems, fmt.Errorf("max_tasks_per_owner: must be at least 1, got %d", c.MaxTasksPerOwner))
	case c.MaxTasks >= 1 && c.MaxTasksPerOwner > c.MaxTasks:
		problems = append(problems, fmt.Errorf("max_tasks_per_owner: must not exceed max_tasks (%d), got %d", c.MaxTasks, c.MaxTasksPerOwner))
	}
	problems = append(problems, validateTTL(c.TTL))
	return errors.Join(problems...)
}

// Redis topologies of RedisConfig.Mode.
const (
	RedisSingle   = "single"
	RedisCluster  = "cluster"
	RedisSentinel = "sentinel"
)

// RedisConfig configures the task index shared by several gateway replicas
// through Redis: one server, a Redis Cluster or a Sentinel-managed primary.
type RedisConfig struct {
	// Mode is the topology: single (one server at Address), cluster (a Redis
	// Cluster reached through the seeds in Addresses) or sentinel (the
	// primary named MasterName, found through the sentinels in Addresses).
	// Defaults to single.
	Mode string `yaml:"mode"`
	// Address is the host:port of the Redis server in single mode. Defaults
	// to 127.0.0.1:6379 when Addresses is empty.
	Address string `yaml:"address"`
	// Addresses are host:port pairs: the cluster's seed nodes, or the
	// sentinels. In single mode it may hold the one address instead of
	// Address.
	Addresses []string `yaml:"addresses"`
	// MasterName is the name the sentinels know the primary by (sentinel
	// mode only).
	MasterName string `yaml:"master_name"`
	// Username is the ACL user; empty for the default user.
	Username string `yaml:"username"`
	// PasswordFile is a file holding the Redis password (one line; a trailing
	// newline is ignored). At most one of PasswordFile and PasswordEnv may be
	// set. Defaults to no password.
	PasswordFile string `yaml:"password_file"`
	// PasswordEnv names an environment variable holding the Redis password,
	// which must be set and non-empty. Defaults to no password.
	PasswordEnv string `yaml:"password_env"`
	// SentinelUsername, SentinelPasswordFile and SentinelPasswordEnv
	// authenticate to the sentinels when they differ from the primary's
	// (sentinel mode only). Default to no authentication. The sentinel
	// password is read at start only: go-redis v9 builds its sentinel
	// clients from a fixed password (FailoverOptions.sentinelOptions), with
	// no credentials provider as for the primary.
	SentinelUsername     string `yaml:"sentinel_username"`
	SentinelPasswordFile string `yaml:"sentinel_password_file"`
	SentinelPasswordEnv  string `yaml:"sentinel_password_env"`
	// TLS configures TLS to every Redis node (and sentinel).
	TLS RedisTLSConfig `yaml:"tls"`
	// DB is the Redis database number. Defaults to 0; Redis Cluster has
	// only database 0.
	DB int `yaml:"db"`
	// KeyPrefix starts every key the gateway writes, so that several gateways
	// or environments can share one Redis. Defaults to "a2agw:". It may not
	// hold '{' or '}', which would change the keys' hash slots.
	KeyPrefix string `yaml:"key_prefix"`
	// TTL is how long a task is kept after its last update; every key the
	// store writes expires after it. Defaults to 24h.
	TTL time.Duration `yaml:"ttl"`
	// DialTimeout bounds connecting to Redis. Defaults to 2s.
	DialTimeout time.Duration `yaml:"dial_timeout"`
	// ReadTimeout bounds waiting for a Redis reply. Defaults to 1s.
	ReadTimeout time.Duration `yaml:"read_timeout"`
	// WriteTimeout bounds sending a command to Redis. Defaults to 1s.
	WriteTimeout time.Duration `yaml:"write_timeout"`
	// MaxTasksPerOwner bounds the tasks one principal holds in one agent;
	// past it, its own final task updated least recently is dropped, and
	// with none its new task is refused. Tasks recorded with authentication
	// off are not bounded. Defaults to 10000.
	MaxTasksPerOwner int `yaml:"max_tasks_per_owner" zero:"unset"`
	// MinReplicaAcks is how many replicas must have a task write (WAIT)
	// before Put reports it written, so that a failover cannot lose a task
	// the gateway answered with: Redis replicates asynchronously, and a
	// primary demoted by Sentinel keeps taking writes until it is told.
	// Single and sentinel modes only. Defaults to 0 (no wait).
	MinReplicaAcks int `yaml:"min_replica_acks"`

	now func() time.Time // tests inject a clock; time.Now otherwise
	log *slog.Logger     // tests inject a logger; slog.Default() otherwise
}

// RedisTLSConfig configures TLS to Redis. The server's certificate is
// verified against CAFile (or the system's roots) and ServerName (or the
// host of each address).
type RedisTLSConfig struct {
	Enabled bool `yaml:"enabled"`
	// CAFile is a PEM file of the CA certificates to trust instead of the
	// system's.
	CAFile string `yaml:"ca_file"`
	// CertFile and KeyFile are the PEM client certificate and key, for
	// servers that require mutual TLS. Set both or neither.
	CertFile string `yaml:"cert_file"`
	KeyFile  string `yaml:"key_file"`
	// ServerName is the name the servers' certificates must carry, when it
	// is not the host of the addresses.
	ServerName string `yaml:"server_name"`
	// InsecureSkipVerify accepts any server certificate: anyone on the path
	// can then read and change the index. For tests only; the gateway logs
	// a warning at start when it is set.
	InsecureSkipVerify bool `yaml:"insecure_skip_verify"`
}

// SetDefaults fills the unset fields with their defaults.
func (c *RedisConfig) SetDefaults() {
	c.Mode = cmp.Or(c.Mode, RedisSingle)
	if c.Address == "" && len(c.Addresses) == 0 && c.Mode == RedisSingle {
		c.Address = DefaultRedisAddress
	}
	c.KeyPrefix = cmp.Or(c.KeyPrefix, DefaultKeyPrefix)
	c.TTL = cmp.Or(c.TTL, DefaultTTL)
	c.DialTimeout = cmp.Or(c.DialTimeout, DefaultDialTimeout)
	c.ReadTimeout = cmp.Or(c.ReadTimeout, DefaultReadTimeout)
	c.WriteTimeout = cmp.Or(c.WriteTimeout, DefaultWriteTimeout)
	c.MaxTasksPerOwner = cmp.Or(c.MaxTasksPerOwner, DefaultMaxTasksPerOwner)
}

// addresses returns the configured addresses, Address or Addresses.
func (c *RedisConfig) addresses() []string {
	if c.Address != "" {
		return []string{c.Address}
	}
	return c.Addresses
}

// Validate reports every problem of c, joined. Call it after SetDefaults.
// It does not read the password or the TLS files, or contact Redis; NewRedis
// does the former.
func (c *RedisConfig) Validate() error {
	var problems []error
	problems = append(problems, c.validateTopology()...)
	if c.PasswordFile != "" && c.PasswordEnv != "" {
		problems = append(problems, errors.New("password_file and password_env: set at most one"))
	}
	if c.SentinelPasswordFile != "" && c.SentinelPasswordEnv != "" {
		problems = append(problems, errors.New("sentinel_password_file and sentinel_password_env: set at most one"))
	}
	if c.DB < 0 {
		problems = append(problems, fmt.Errorf("db: must not be negative, got %d", c.DB))
	}
	if c.DB != 0 && c.Mode == RedisCluster {
		problems = append(problems, fmt.Errorf("db: Redis Cluster has only database 0, got %d", c.DB))
	}
	switch {
	case c.KeyPrefix == "":
		problems = append(problems, errors.New("key_prefix: must not be empty"))
	case strings.ContainsAny(c.KeyPrefix, "{}"):
		problems = append(problems, fmt.Errorf("key_prefix: must not hold '{' or '}', which decide the keys' hash slots, got %q", c.KeyPrefix))
	case len(c.KeyPrefix) > MaxKeyPrefixBytes:
		problems = append(problems, fmt.Errorf("key_prefix: must be at most %d bytes, got %d: every key carries it", MaxKeyPrefixBytes, len(c.KeyPrefix)))
	}
	switch {
	case c.MaxTasksPerOwner < 1:
		problems = append(problems, fmt.Errorf("max_tasks_per_owner: must be at least 1, got %d", c.MaxTasksPerOwner))
	case c.MaxTasksPerOwner > MaxMaxTasks:
		problems = append(problems, maxTasksTooLarge("max_tasks_per_owner", c.MaxTasksPerOwner))
	}
	switch {
	case c.MinReplicaAcks < 0:
		problems = append(problems, fmt.Errorf("min_replica_acks: must not be negative, got %d", c.MinReplicaAcks))
	case c.MinReplicaAcks > MaxMinReplicaAcks:
		problems = append(problems, fmt.Errorf("min_replica_acks: must be at most %d, got %d: every task write would wait for replicas a primary does not keep, and fail", MaxMinReplicaAcks, c.MinReplicaAcks))
	case c.MinReplicaAcks > 0 && c.Mode == RedisCluster:
		problems = append(problems, errors.New("min_replica_acks: not supported in cluster mode, where a write's replicas are not one connection's"))
	}
	problems = append(problems, validateTTL(c.TTL))
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"dial_timeout", c.DialTimeout},
		{"read_timeout", c.ReadTimeout},
		{"write_timeout", c.WriteTimeout},
	} {
		switch {
		case d.v <= 0:
			problems = append(problems, fmt.Errorf("%s: must be positive, got %s", d.name, d.v))
		case d.v > MaxRedisTimeout:
			problems = append(problems, fmt.Errorf("%s: must be at most %s, got %s: calls wait on the index, and a Redis that stalls would hold each one as long", d.name, MaxRedisTimeout, d.v))
		}
	}
	problems = append(problems, c.TLS.validate()...)
	return errors.Join(problems...)
}

func (c *RedisConfig) validateTopology() []error {
	var problems []error
	switch c.Mode {
	case RedisSingle, "":
		switch {
		case c.Address != "" && len(c.Addresses) > 0:
			problems = append(problems, errors.New("address and addresses: set one, not both"))
		case len(c.Addresses) > 1:
			problems = append(problems, fmt.Errorf("addresses: single mode takes one address, got %d (mode: cluster or sentinel for more)", len(c.Addresses)))
		}
	case RedisCluster, RedisSentinel:
		if c.Address != "" {
			problems = append(problems, fmt.Errorf("address: not used in %s mode: list the %s in addresses", c.Mode, map[string]string{RedisCluster: "seed nodes", RedisSentinel: "sentinels"}[c.Mode]))
		}
		if len(c.Addresses) == 0 {
			problems = append(problems, fmt.Errorf("addresses: %s mode needs at least one", c.Mode))
		}
	default:
		problems = append(problems, fmt.Errorf("mode: want single, cluster or sentinel, got %q", c.Mode))
	}
	if c.Mode == RedisSentinel && c.MasterName == "" {
		problems = append(problems, errors.New("master_name: sentinel mode needs the name the sentinels know the primary by"))
	}
	if c.Mode != RedisSentinel {
		for _, f := range []struct{ name, v string }{{"master_name", c.MasterName}, {"sentinel_username", c.SentinelUsername},
			{"sentinel_password_file", c.SentinelPasswordFile}, {"sentinel_password_env", c.SentinelPasswordEnv}} {
			if f.v != "" {
				problems = append(problems, fmt.Errorf("%s: only used in sentinel mode", f.name))
			}
		}
	}
	field := "address"
	if c.Address == "" {
		field = "addresses"
	}
	for _, a := range c.addresses() {
		if _, port, err := net.SplitHostPort(a); err != nil || port == "" {
			problems = append(problems, fmt.Errorf("%s: want host:port, got %q", field, a))
		}
	}
	return problems
}

func (c *RedisTLSConfig) validate() []error {
	var problems []error
	if !c.Enabled {
		for _, f := range []struct {
			name string
			set  bool
		}{{"tls.ca_file", c.CAFile != ""}, {"tls.cert_file", c.CertFile != ""}, {"tls.key_file", c.KeyFile != ""},
			{"tls.server_name", c.ServerName != ""}, {"tls.insecure_skip_verify", c.InsecureSkipVerify}} {
			if f.set {
				problems = append(problems, fmt.Errorf("%s: set, but tls.enabled is false: enable TLS or drop it", f.name))
			}
		}
		return problems
	}
	if (c.CertFile == "") != (c.KeyFile == "") {
		problems = append(problems, errors.New("tls.cert_file and tls.key_file: set both (mutual TLS) or neither"))
	}
	if c.InsecureSkipVerify && (c.CAFile != "" || c.ServerName != "") {
		problems = append(problems, errors.New("tls.insecure_skip_verify: verifies nothing, so tls.ca_file and tls.server_name would be ignored: drop one side"))
	}
	return problems
}

func validateTTL(ttl time.Duration) error {
	switch {
	case ttl < minTTL:
		return fmt.Errorf("ttl: must be at least %s, got %s", minTTL, ttl)
	case ttl > MaxTTL:
		return fmt.Errorf("ttl: must be at most %s (30 days), got %s: the index holds every task that long", MaxTTL, ttl)
	}
	return nil
}

func maxTasksTooLarge(name string, n int) error {
	return fmt.Errorf("%s: must be at most %d, got %d: every task holds index memory, and a larger bound holds none back", name, MaxMaxTasks, n)
}
