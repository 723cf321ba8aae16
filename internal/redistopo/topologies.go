package redistopo

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// noPersistence keeps the data nodes in memory only, and has a primary
// sync a new replica at once rather than wait 5 s for others to join.
var noPersistence = []string{"--save", "", "--appendonly", "no", "--repl-diskless-sync-delay", "0"}

// StartSingle starts one TLS-only server.
func StartSingle(t testing.TB) (*Env, *Node) {
	e := newEnv(t)
	return e, e.start("single", func(string, int) []string { return noPersistence })
}

// StartPlain starts one server without TLS, for measurements that TLS
// would blur; its address is 127.0.0.1:<port>.
func StartPlain(t testing.TB) *Node {
	Require(t)
	dir := t.TempDir()
	var last error
	for range 3 {
		port := freePort(t)
		n := &Node{Addr: "127.0.0.1:" + strconv.Itoa(port), Port: port, t: t, dir: dir,
			args: append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir,
				"--logfile", filepath.Join(dir, "redis.log")}, noPersistence...)}
		if last = n.run(); last != nil {
			continue
		}
		c := redis.NewClient(&redis.Options{Addr: n.Addr, MaxRetries: -1})
		last = waitFor(startTimeout, func() error {
			if !n.alive() {
				return errStop{fmt.Errorf("redis-server %s exited:\n%s", n.Addr, tail(n.Log()))}
			}
			return c.Ping(context.Background()).Err()
		})
		c.Close()
		if last == nil {
			return n
		}
		n.Kill()
	}
	t.Fatalf("starting a plain redis-server: %v", last)
	return nil
}

// Cluster is a Redis Cluster of three primaries with one replica each.
type Cluster struct {
	*Env
	Nodes []*Node
}

// FailFastNodeTimeout is how long a cluster of StartFailFastCluster takes a
// silent node for failed: a failover takes about twice that.
const FailFastNodeTimeout = time.Second

// stableNodeTimeout is the node timeout of StartCluster's clusters, which
// no test means to lose a node of: on a busy machine a node starved of CPU
// for longer than FailFastNodeTimeout would be failed over, its slots
// reported down (CLUSTERDOWN) to calls in the middle of a test. A manual
// CLUSTER FAILOVER and slot migrations do not wait on it. Every cluster is
// formed with it: a node drops a CLUSTER MEET handshake not done within
// the node timeout, and redis-cli --cluster create, which sends each MEET
// once, then waits for the cluster to join until it is killed.
const stableNodeTimeout = 30 * time.Second

// clusterCreateTimeout bounds redis-cli --cluster create, which polls until
// all six nodes agree on the configuration they gossip; on a machine
// several clusters are formed on at once that takes far longer than
// starting a node.
const clusterCreateTimeout = 5 * time.Minute

// StartCluster starts six nodes and makes them a cluster with
// redis-cli --cluster create, for tests that change the cluster only by
// migrating slots and manual failovers.
func StartCluster(t testing.TB) *Cluster { return startCluster(t, stableNodeTimeout) }

// StartFailFastCluster is StartCluster for tests that kill nodes and wait
// for the cluster to notice: once formed, it takes a node silent for
// FailFastNodeTimeout for failed.
func StartFailFastCluster(t testing.TB) *Cluster { return startCluster(t, FailFastNodeTimeout) }

const nodeTimeoutOption = "--cluster-node-timeout"

func startCluster(t testing.TB, nodeTimeout time.Duration) *Cluster {
	e := newEnv(t)
	c := &Cluster{Env: e}
	for range 6 {
		c.Nodes = append(c.Nodes, e.start("cluster", func(dir string, _ int) []string {
			return append([]string{"--cluster-enabled", "yes", "--cluster-config-file", filepath.Join(dir, "nodes.conf"),
				"--cluster-port", strconv.Itoa(freePort(t)), "--tls-cluster", "yes",
				nodeTimeoutOption, strconv.FormatInt(stableNodeTimeout.Milliseconds(), 10)}, noPersistence...)
		}))
	}
	args := append(e.cliArgs(), "--cluster", "create")
	for _, n := range c.Nodes {
		args = append(args, n.Addr)
	}
	args = append(args, "--cluster-replicas", "1", "--cluster-yes")
	ctx, cancel := context.WithTimeout(context.Background(), clusterCreateTimeout)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "redis-cli", args...).CombinedOutput(); err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	if err := waitFor(startTimeout, c.healthy); err != nil {
		t.Fatalf("cluster not ready: %v", err)
	}
	if nodeTimeout != stableNodeTimeout {
		ms := strconv.FormatInt(nodeTimeout.Milliseconds(), 10)
		for _, n := range c.Nodes {
			if err := c.Client(n).ConfigSet(ctx, "cluster-node-timeout", ms).Err(); err != nil {
				t.Fatalf("setting the node timeout of %s: %v", n.Addr, err)
			}
			// A restarted node knows the others from nodes.conf: no
			// handshake to wait for.
			n.args[slices.Index(n.args, nodeTimeoutOption)+1] = ms
		}
	}
	return c
}

// cliArgs are the redis-cli options to reach the topology's nodes.
func (e *Env) cliArgs() []string {
	return []string{"--tls", "--cacert", e.TLS.CA, "--cert", e.TLS.ClientCert, "--key", e.TLS.ClientKey}
}

// Addrs are the addresses of the cluster's nodes, for a client's seeds.
func (c *Cluster) Addrs() []string {
	addrs := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		addrs[i] = n.Addr
	}
	return addrs
}

// clusterNode is one line of CLUSTER NODES.
type clusterNode struct {
	id, addr, primaryID string
	primary, failed     bool
	slots               []string
}

// topology returns CLUSTER NODES as node n sees it.
func (c *Cluster) topology(n *Node) ([]clusterNode, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	cl := redis.NewClient(&redis.Options{Addr: n.Addr, TLSConfig: c.ClientTLS(), MaxRetries: -1})
	defer cl.Close()
	out, err := cl.ClusterNodes(ctx).Result()
	if err != nil {
		return nil, err
	}
	var nodes []clusterNode
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 8 {
			continue
		}
		addr, _, _ := strings.Cut(f[1], "@")
		nodes = append(nodes, clusterNode{
			id: f[0], addr: addr, primaryID: f[3],
			primary: strings.Contains(f[2], "master"), failed: strings.Contains(f[2], "fail"),
			slots: f[8:],
		})
	}
	return nodes, nil
}

// healthy reports whether every live node sees three primaries holding all
// slots, each with a replica, and no failed node, and serves every slot
// (cluster_state:ok): only then do calls through any node succeed.
func (c *Cluster) healthy() error {
	for _, n := range c.live() {
		nodes, err := c.topology(n)
		if err != nil {
			return err
		}
		primaries, replicas := 0, map[string]int{}
		for _, cn := range nodes {
			switch {
			case cn.failed:
				return fmt.Errorf("%s sees %s failed", n.Addr, cn.addr)
			case cn.primary && len(cn.slots) > 0:
				primaries++
			case !cn.primary:
				replicas[cn.primaryID]++
			}
		}
		if primaries != 3 || len(replicas) != 3 {
			return fmt.Errorf("%s sees %d primaries with slots, %d with replicas", n.Addr, primaries, len(replicas))
		}
		info, err := c.clusterInfo(n)
		if err != nil {
			return err
		}
		if !strings.Contains(info, "cluster_state:ok") || !strings.Contains(info, "cluster_slots_ok:16384") {
			return fmt.Errorf("%s: not every slot served:\n%s", n.Addr, info)
		}
	}
	return nil
}

func (c *Cluster) clusterInfo(n *Node) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	cl := redis.NewClient(&redis.Options{Addr: n.Addr, TLSConfig: c.ClientTLS(), MaxRetries: -1})
	defer cl.Close()
	return cl.ClusterInfo(ctx).Result()
}

func (c *Cluster) live() []*Node {
	var live []*Node
	for _, n := range c.Nodes {
		select {
		case <-n.exited:
		default:
			live = append(live, n)
		}
	}
	return live
}

func (c *Cluster) node(addr string) *Node {
	for _, n := range c.Nodes {
		if n.Addr == addr {
			return n
		}
	}
	c.t.Fatalf("no node %s", addr)
	return nil
}

// owner returns the primary serving slot, and the node's id, as the first
// live node sees it.
func (c *Cluster) owner(slot int) (primary *Node, id string) {
	c.t.Helper()
	nodes, err := c.topology(c.live()[0])
	if err != nil {
		c.t.Fatal(err)
	}
	for _, cn := range nodes {
		if !cn.primary || cn.failed {
			continue
		}
		for _, r := range cn.slots {
			lo, hi, found := strings.Cut(r, "-")
			if !found {
				hi = lo
			}
			l, err1 := strconv.Atoi(lo)
			h, err2 := strconv.Atoi(hi)
			if err1 == nil && err2 == nil && l <= slot && slot <= h {
				return c.node(cn.addr), cn.id
			}
		}
	}
	c.t.Fatalf("no primary serves slot %d", slot)
	return nil, ""
}

// Slot returns the hash slot of key.
func (c *Cluster) Slot(key string) int {
	c.t.Helper()
	n, err := c.Client(c.live()[0]).ClusterKeySlot(context.Background(), key).Result()
	if err != nil {
		c.t.Fatal(err)
	}
	return int(n)
}

// PrimaryOf returns the primary serving slot.
func (c *Cluster) PrimaryOf(slot int) *Node {
	n, _ := c.owner(slot)
	return n
}

// MigrateSlot moves slot, keys and all, to another primary, the way
// redis-cli --cluster reshard does: IMPORTING on the target, MIGRATING on
// the source, MIGRATE of the keys in batches, then the new owner announced.
// Clients see ASK redirects, and TRYAGAIN for commands over keys split
// between both nodes, until it is done.
func (c *Cluster) MigrateSlot(slot int) {
	c.t.Helper()
	src, srcID := c.owner(slot)
	nodes, err := c.topology(src)
	if err != nil {
		c.t.Fatal(err)
	}
	var dst *Node
	var dstID string
	for _, cn := range nodes {
		if cn.primary && !cn.failed && cn.id != srcID && len(cn.slots) > 0 {
			dst, dstID = c.node(cn.addr), cn.id
			break
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	s, d := c.Client(src), c.Client(dst)
	must := func(err error) {
		c.t.Helper()
		if err != nil {
			c.t.Fatalf("migrating slot %d from %s to %s: %v", slot, src.Addr, dst.Addr, err)
		}
	}
	must(d.Do(ctx, "CLUSTER", "SETSLOT", slot, "IMPORTING", srcID).Err())
	must(s.Do(ctx, "CLUSTER", "SETSLOT", slot, "MIGRATING", dstID).Err())
	for {
		keys, err := s.ClusterGetKeysInSlot(ctx, slot, 10).Result()
		must(err)
		if len(keys) == 0 {
			break
		}
		args := []any{"MIGRATE", "127.0.0.1", dst.Port, "", 0, 5000, "KEYS"}
		for _, k := range keys {
			args = append(args, k)
		}
		must(s.Do(ctx, args...).Err())
	}
	must(d.Do(ctx, "CLUSTER", "SETSLOT", slot, "NODE", dstID).Err())
	must(s.Do(ctx, "CLUSTER", "SETSLOT", slot, "NODE", dstID).Err())
	for _, n := range c.live() {
		if n != src && n != dst {
			c.Client(n).Do(ctx, "CLUSTER", "SETSLOT", slot, "NODE", dstID) // the others learn it from gossip otherwise
		}
	}
}

// Shard returns the primary serving slot and its replica.
func (c *Cluster) Shard(slot int) (primary, replica *Node) {
	c.t.Helper()
	primary, primaryID := c.owner(slot)
	nodes, err := c.topology(primary)
	if err != nil {
		c.t.Fatal(err)
	}
	for _, cn := range nodes {
		if !cn.primary && cn.primaryID == primaryID {
			return primary, c.node(cn.addr)
		}
	}
	c.t.Fatalf("slot %d's primary has no replica", slot)
	return nil, nil
}

// Failover promotes the replica of slot's primary with CLUSTER FAILOVER,
// which waits for the replica to catch up first, and returns the new
// primary once every node agrees.
func (c *Cluster) Failover(slot int) *Node {
	c.t.Helper()
	_, replica := c.Shard(slot)
	if err := c.Client(replica).Do(context.Background(), "CLUSTER", "FAILOVER").Err(); err != nil {
		c.t.Fatal(err)
	}
	if err := waitFor(startTimeout, func() error {
		if p := c.PrimaryOf(slot); p != replica {
			return fmt.Errorf("slot %d still served by %s", slot, p.Addr)
		}
		return c.healthy()
	}); err != nil {
		c.t.Fatal(err)
	}
	return replica
}

// Sentinel is a primary with two replicas, watched by three sentinels: a
// failover leaves the new primary a replica at once.
type Sentinel struct {
	*Env
	Primary   *Node
	Replicas  []*Node
	Sentinels []*Node
}

// MasterName is the name the sentinels know the primary by.
const MasterName = "a2agw-index"

// SentinelDownAfter is how long the sentinels take a silent primary for
// down; a failover takes that and an election.
const SentinelDownAfter = time.Second

// StartSentinel starts a primary, its two replicas and three sentinels.
func StartSentinel(t testing.TB) *Sentinel {
	e := newEnv(t)
	s := &Sentinel{Env: e}
	s.Primary = e.start("primary", func(string, int) []string { return noPersistence })
	for range 2 {
		s.Replicas = append(s.Replicas, e.start("replica", func(string, int) []string {
			return append([]string{"--replicaof", "127.0.0.1", strconv.Itoa(s.Primary.Port)}, noPersistence...)
		}))
	}
	for range 3 {
		s.Sentinels = append(s.Sentinels, e.start("sentinel", func(dir string, _ int) []string {
			conf := filepath.Join(dir, "sentinel.conf")
			body := fmt.Sprintf("sentinel monitor %s 127.0.0.1 %d 2\nsentinel down-after-milliseconds %s %d\nsentinel failover-timeout %s 10000\n",
				MasterName, s.Primary.Port, MasterName, SentinelDownAfter.Milliseconds(), MasterName)
			if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			return []string{conf, "--sentinel"}
		}))
	}
	if err := waitFor(startTimeout, func() error {
		for _, r := range s.Replicas {
			if err := s.replicating(r); err != nil {
				return err
			}
		}
		return s.agreed(s.Primary, 2)
	}); err != nil {
		t.Fatalf("sentinels not ready: %v", err)
	}
	return s
}

// replicating reports whether replica's link to its primary is up.
func (e *Env) replicating(replica *Node) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	cl := redis.NewClient(&redis.Options{Addr: replica.Addr, TLSConfig: e.ClientTLS(), MaxRetries: -1})
	defer cl.Close()
	info, err := cl.Info(ctx, "replication").Result()
	if err != nil {
		return err
	}
	if !strings.Contains(info, "master_link_status:up") {
		return fmt.Errorf("replica %s: link to its primary not up:\n%s", replica.Addr, tail(replica.Log()))
	}
	return nil
}

// Addrs are the sentinels' addresses.
func (s *Sentinel) Addrs() []string {
	var addrs []string
	for _, n := range s.Sentinels {
		addrs = append(addrs, n.Addr)
	}
	return addrs
}

// agreed reports whether every sentinel names primary (any node but the
// old primary when primary is nil), knows the two others and sees replicas
// replicas up.
func (s *Sentinel) agreed(primary *Node, replicas int) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	for _, n := range s.Sentinels {
		sc := redis.NewSentinelClient(&redis.Options{Addr: n.Addr, TLSConfig: s.ClientTLS(), MaxRetries: -1})
		defer sc.Close()
		addr, err := sc.GetMasterAddrByName(ctx, MasterName).Result()
		if err != nil {
			return err
		}
		if got := strings.Join(addr, ":"); got != primary.Addr {
			return fmt.Errorf("sentinel %s names %s, want %s", n.Addr, got, primary.Addr)
		}
		if err := s.replicating(primary); err == nil {
			return fmt.Errorf("%s is still a replica", primary.Addr)
		}
		others, err := sc.Sentinels(ctx, MasterName).Result()
		if err != nil {
			return err
		}
		if len(others) != 2 {
			return fmt.Errorf("sentinel %s knows %d others", n.Addr, len(others))
		}
		reps, err := sc.Replicas(ctx, MasterName).Result()
		if err != nil {
			return err
		}
		up := slices.DeleteFunc(reps, func(r map[string]string) bool { return strings.Contains(r["flags"], "down") })
		if len(up) < replicas {
			return fmt.Errorf("sentinel %s sees %d replicas up", n.Addr, len(up))
		}
	}
	return nil
}

// Failover has the sentinels promote a replica (SENTINEL FAILOVER, unless
// the primary was killed) and returns once they all name it and it has a
// replica of its own.
func (s *Sentinel) Failover() {
	s.t.Helper()
	old := s.Primary
	if old.alive() {
		sc := redis.NewSentinelClient(&redis.Options{Addr: s.Sentinels[0].Addr, TLSConfig: s.ClientTLS(), MaxRetries: -1})
		defer sc.Close()
		if err := sc.Failover(context.Background(), MasterName).Err(); err != nil {
			s.t.Fatal(err)
		}
	}
	if err := waitFor(startTimeout, func() error {
		for _, r := range s.Replicas {
			if s.agreed(r, 1) == nil {
				s.Primary = r
				s.Replicas = slices.DeleteFunc(slices.Clone(s.Replicas), func(n *Node) bool { return n == r })
				return nil
			}
		}
		return fmt.Errorf("no replica of %s promoted and agreed on", old.Addr)
	}); err != nil {
		s.t.Fatalf("failover: %v", err)
	}
	if old.alive() {
		s.Replicas = append(s.Replicas, old)
	}
}
