package store

import (
	"errors"
	"fmt"
	"net"
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

// MemoryConfig configures the in-process task index, for a single gateway
// replica.
type MemoryConfig struct {
	// MaxTasks bounds the number of tasks kept; when the index is full, the
	// final task (completed, canceled, failed, rejected) updated least
	// recently is dropped to make room, and with none a new task is
	// refused. Defaults to 100000.
	MaxTasks int `yaml:"max_tasks"`
	// MaxTasksPerOwner bounds the tasks one principal holds in one agent;
	// past it, its own final task updated least recently is dropped, and
	// with none its new task is refused. Tasks recorded with authentication
	// off are bounded by MaxTasks alone. Defaults to 10000, or MaxTasks if
	// smaller.
	MaxTasksPerOwner int `yaml:"max_tasks_per_owner"`
	// TTL is how long a task is kept after its last update. Defaults to 24h.
	TTL time.Duration `yaml:"ttl"`

	now func() time.Time // tests inject a clock; time.Now otherwise
}

// SetDefaults fills the unset fields with their defaults.
func (c *MemoryConfig) SetDefaults() {
	if c.MaxTasks == 0 {
		c.MaxTasks = DefaultMaxTasks
	}
	if c.MaxTasksPerOwner == 0 {
		c.MaxTasksPerOwner = min(DefaultMaxTasksPerOwner, max(c.MaxTasks, 1))
	}
	if c.TTL == 0 {
		c.TTL = DefaultTTL
	}
}

// Validate reports every problem of c, joined. Call it after SetDefaults.
func (c *MemoryConfig) Validate() error {
	var problems []error
	if c.MaxTasks < 1 {
		problems = append(problems, fmt.Errorf("max_tasks: must be at least 1, got %d", c.MaxTasks))
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

// RedisConfig configures the task index shared by several gateway replicas
// through one Redis server (Redis Cluster is not supported: the scripts touch
// keys of several hash slots).
type RedisConfig struct {
	// Address is the host:port of the Redis server. Defaults to 127.0.0.1:6379.
	Address string `yaml:"address"`
	// PasswordFile is a file holding the Redis password (one line; a trailing
	// newline is ignored). At most one of PasswordFile and PasswordEnv may be
	// set. Defaults to no password.
	PasswordFile string `yaml:"password_file"`
	// PasswordEnv names an environment variable holding the Redis password,
	// which must be set and non-empty. Defaults to no password.
	PasswordEnv string `yaml:"password_env"`
	// DB is the Redis database number. Defaults to 0.
	DB int `yaml:"db"`
	// KeyPrefix starts every key the gateway writes, so that several gateways
	// or environments can share one Redis. Defaults to "a2agw:".
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
	MaxTasksPerOwner int `yaml:"max_tasks_per_owner"`

	now func() time.Time // tests inject a clock; time.Now otherwise
}

// SetDefaults fills the unset fields with their defaults.
func (c *RedisConfig) SetDefaults() {
	if c.Address == "" {
		c.Address = DefaultRedisAddress
	}
	if c.KeyPrefix == "" {
		c.KeyPrefix = DefaultKeyPrefix
	}
	if c.TTL == 0 {
		c.TTL = DefaultTTL
	}
	if c.DialTimeout == 0 {
		c.DialTimeout = DefaultDialTimeout
	}
	if c.ReadTimeout == 0 {
		c.ReadTimeout = DefaultReadTimeout
	}
	if c.WriteTimeout == 0 {
		c.WriteTimeout = DefaultWriteTimeout
	}
	if c.MaxTasksPerOwner == 0 {
		c.MaxTasksPerOwner = DefaultMaxTasksPerOwner
	}
}

// Validate reports every problem of c, joined. Call it after SetDefaults.
// It does not read the password or contact Redis; NewRedis does the former.
func (c *RedisConfig) Validate() error {
	var problems []error
	if _, port, err := net.SplitHostPort(c.Address); err != nil || port == "" {
		problems = append(problems, fmt.Errorf("address: want host:port, got %q", c.Address))
	}
	if c.PasswordFile != "" && c.PasswordEnv != "" {
		problems = append(problems, errors.New("password_file and password_env: set at most one"))
	}
	if c.DB < 0 {
		problems = append(problems, fmt.Errorf("db: must not be negative, got %d", c.DB))
	}
	if c.KeyPrefix == "" {
		problems = append(problems, errors.New("key_prefix: must not be empty"))
	}
	if c.MaxTasksPerOwner < 1 {
		problems = append(problems, fmt.Errorf("max_tasks_per_owner: must be at least 1, got %d", c.MaxTasksPerOwner))
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
		if d.v <= 0 {
			problems = append(problems, fmt.Errorf("%s: must be positive, got %s", d.name, d.v))
		}
	}
	return errors.Join(problems...)
}

func validateTTL(ttl time.Duration) error {
	if ttl < minTTL {
		return fmt.Errorf("ttl: must be at least %s, got %s", minTTL, ttl)
	}
	return nil
}
