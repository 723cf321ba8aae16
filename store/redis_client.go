package store

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// newRedisClient returns the go-redis client of cfg's topology. It reads the
// passwords and the TLS files but does not contact Redis.
func newRedisClient(cfg *RedisConfig, nodes *nodeErrors) (redis.UniversalClient, error) {
	password, err := secret(cfg.PasswordFile, cfg.PasswordEnv, "password")
	if err != nil {
		return nil, err
	}
	sentinelPassword, err := secret(cfg.SentinelPasswordFile, cfg.SentinelPasswordEnv, "sentinel_password")
	if err != nil {
		return nil, err
	}
	log := cfg.log
	if log == nil {
		log = slog.Default()
	}
	tlsConfig, err := cfg.TLS.load(log)
	if err != nil {
		return nil, err
	}
	dialer := (&nodeDialer{
		net:   net.Dialer{Timeout: cfg.DialTimeout, KeepAlive: 5 * time.Minute},
		tls:   tlsConfig,
		log:   log,
		logs:  map[string]time.Time{},
		nodes: nodes,
	}).dial
	// One retry replaces a pooled connection that Redis closed (after a
	// restart, say); more would multiply the time a caller waits before
	// failing closed while Redis is down. Maintenance notifications are a
	// Redis Enterprise feature; probing for them costs a round trip per
	// connection. The caller's deadline (its request's) bounds every call
	// but a send's script queued in the autopipeliner (Redis.runHot), which
	// the read and write timeouts bound.
	maint := &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	// A password from a file is read again for every new connection: a
	// rotated Secret (the file rewritten, the old password revoked) is
	// then used from the next reconnect on, where the password read at
	// start would fail every reconnect until a restart.
	var creds func(context.Context) (string, string, error)
	if cfg.PasswordFile != "" {
		creds = func(context.Context) (string, string, error) {
			p, err := secret(cfg.PasswordFile, "", "password")
			return cfg.Username, p, err
		}
	}
	switch cfg.Mode {
	case RedisCluster:
		return redis.NewClusterClient(&redis.ClusterOptions{
			Addrs: cfg.Addresses, Dialer: dialer, Username: cfg.Username, Password: password,
			CredentialsProviderContext: creds,
			DialTimeout:                cfg.DialTimeout, ReadTimeout: cfg.ReadTimeout, WriteTimeout: cfg.WriteTimeout,
			ContextTimeoutEnabled: true, MaxRetries: 1, DialerRetries: 1,
			// A moved slot costs one redirect; a failover may cost a few
			// while the cluster agrees on the new primary.
			MaxRedirects:             3,
			MaintNotificationsConfig: maint,
		}), nil
	case RedisSentinel:
		return redis.NewFailoverClient(&redis.FailoverOptions{
			MasterName: cfg.MasterName, SentinelAddrs: cfg.Addresses, Dialer: dialer,
			SentinelUsername: cfg.SentinelUsername, SentinelPassword: sentinelPassword,
			Username: cfg.Username, Password: password, DB: cfg.DB,
			CredentialsProviderContext: creds,
			DialTimeout:                cfg.DialTimeout, ReadTimeout: cfg.ReadTimeout, WriteTimeout: cfg.WriteTimeout,
			ContextTimeoutEnabled: true, MaxRetries: 1, DialerRetries: 1,
		}), nil
	}
	return redis.NewClient(&redis.Options{
		Addr: cfg.addresses()[0], Dialer: dialer, Username: cfg.Username, Password: password, DB: cfg.DB,
		CredentialsProviderContext: creds,
		DialTimeout:                cfg.DialTimeout, ReadTimeout: cfg.ReadTimeout, WriteTimeout: cfg.WriteTimeout,
		ContextTimeoutEnabled: true, MaxRetries: 1, DialerRetries: 1,
		MaintNotificationsConfig: maint,
	}), nil
}

// secret reads a password from file or from the environment variable env;
// field names the config fields in errors.
func secret(file, env, field string) (string, error) {
	switch {
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("%s_file: %w", field, err)
		}
		return strings.TrimRight(string(b), "\r\n"), nil
	case env != "":
		v := os.Getenv(env)
		if v == "" {
			return "", fmt.Errorf("%s_env: environment variable %s is unset or empty", field, env)
		}
		return v, nil
	}
	return "", nil
}

// load returns the TLS client configuration, nil when TLS is off.
func (c *RedisTLSConfig) load(log *slog.Logger) (*tls.Config, error) {
	if !c.Enabled {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: c.ServerName}
	var problems []error
	if c.CAFile != "" {
		pem, err := os.ReadFile(c.CAFile)
		switch {
		case err != nil:
			problems = append(problems, fmt.Errorf("tls.ca_file: %w", err))
		default:
			cfg.RootCAs = x509.NewCertPool()
			if !cfg.RootCAs.AppendCertsFromPEM(pem) {
				problems = append(problems, fmt.Errorf("tls.ca_file: no PEM certificate in %s", c.CAFile))
			}
		}
	}
	if c.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
		if err != nil {
			problems = append(problems, fmt.Errorf("tls.cert_file and tls.key_file: %w", err))
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	if err := errors.Join(problems...); err != nil {
		return nil, err
	}
	if c.InsecureSkipVerify {
		log.Warn("store.redis.tls.insecure_skip_verify is set: the Redis servers' certificates are not verified, " +
			"so anyone on the network path can read and change the task index; use it in tests only")
		cfg.InsecureSkipVerify = true
	}
	return cfg, nil
}

// nodeDialer connects to one Redis node (or sentinel), over TLS when set,
// and logs and counts which node could not be reached or broke a
// connection: go-redis's errors do not always name it, and a cluster or a
// Sentinel setup has several.
type nodeDialer struct {
	net   net.Dialer
	tls   *tls.Config
	log   *slog.Logger
	nodes *nodeErrors

	mu   sync.Mutex
	logs map[string]time.Time // node address -> last failure logged
}

// nodeLogInterval spaces the failure logs of one node: every call during an
// outage would otherwise log one.
const nodeLogInterval = 10 * time.Second

func (d *nodeDialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	conn, err := d.connect(ctx, network, addr, d.nodes.counter(addr))
	if err != nil {
		d.logFailure(addr, err)
		return nil, err
	}
	return conn, nil
}

func (d *nodeDialer) connect(ctx context.Context, network, addr string, failures *atomic.Uint64) (net.Conn, error) {
	raw, err := d.net.DialContext(ctx, network, addr)
	if err != nil {
		if !errors.Is(err, context.Canceled) {
			failures.Add(1)
		}
		return nil, err
	}
	// Counted beneath TLS, so that a broken connection counts whatever
	// the layer above makes of it.
	counted := newCountedConn(raw, failures)
	conn := net.Conn(counted)
	if d.tls == nil {
		return conn, nil
	}
	cfg := d.tls
	if cfg.ServerName == "" {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			conn.Close()
			return nil, err
		}
		cfg = cfg.Clone()
		cfg.ServerName = host
	}
	tc := tls.Client(conn, cfg)
	hsCtx, cancel := context.WithTimeout(ctx, d.net.Timeout)
	defer cancel()
	if err := tc.HandshakeContext(hsCtx); err != nil {
		counted.failed(err) // once, whether or not a read of the handshake was
		conn.Close()
		return nil, fmt.Errorf("tls handshake with %s: %w", addr, err)
	}
	return tc, nil
}

func (d *nodeDialer) logFailure(addr string, err error) {
	if errors.Is(err, context.Canceled) {
		return // the caller gave up; the node may be fine
	}
	now := time.Now()
	d.mu.Lock()
	last, seen := d.logs[addr]
	if seen && now.Sub(last) < nodeLogInterval {
		d.mu.Unlock()
		return
	}
	d.logs[addr] = now
	d.mu.Unlock()
	d.log.Error("task index: cannot connect to a Redis node", "node", addr, "error", err)
}
