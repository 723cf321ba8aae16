package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis is a Store kept in Redis, shared by several gateway replicas. It is
// safe for concurrent use. Every failure to reach Redis wraps ErrUnavailable.
type Redis struct {
	client redis.UniversalClient
	// cluster is set for a Redis Cluster, where keys of different hash
	// slots may not meet in one script.
	cluster     bool
	keys        redisKeys
	ttl         time.Duration
	physicalTTL time.Duration
	maxPerOwner int
	minAcks     int
	ackTimeout  time.Duration
	now         func() time.Time

	saves *sendSaves
	nodes *nodeErrors
	// scripts, when set, runs the scripts of sends (admission and task)
	// in place of client when several are in flight (NewRedis, runHot).
	scripts  processor
	inFlight atomic.Int32
	// The scripts' arguments that are the same for every call, boxed once.
	physicalTTLArg, shareArg any
	agentsKey                string

	// registered holds when each agent was last added to the agents set
	// by this process, which Put renews once per agentRenewal.
	registered sync.Map
}

var _ Store = (*Redis)(nil)

// redisTTLGrace lengthens the Redis TTL of every key past the task's logical
// expiry, which the scripts decide from the replicas' clocks: Redis's own
// clock and a replica's may differ, and a key must not vanish while a task in
// it is still live (its index entry would be left without its task).
const redisTTLGrace = time.Minute

// redisRenewalWindow is how long Put may leave the TTL of an owner's
// shared indexes (and of its send records' index) unrenewed, saving their
// PEXPIREs on most puts: they then still outlive every task by
// redisTTLGrace less the window, the clock skew between Redis and the
// replicas tolerated.
const redisRenewalWindow = redisTTLGrace / 2

// NewRedis returns a Redis store configured by cfg after SetDefaults. It reads
// the passwords and the TLS files but does not contact Redis: a gateway may
// start before Redis does, and Ping reports readiness.
func NewRedis(cfg RedisConfig) (*Redis, error) {
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("redis store config: %w", err)
	}
	nodes := &nodeErrors{nodes: map[string]*atomic.Uint64{}}
	client, err := newRedisClient(&cfg, nodes)
	if err != nil {
		return nil, fmt.Errorf("redis store config: %w", err)
	}
	now := cfg.now
	if now == nil {
		now = time.Now
	}
	_, cluster := client.(*redis.ClusterClient)
	// The scripts of every send go through go-redis's autopipeliner on one
	// node (single, sentinel): the concurrent sends' scripts share round
	// trips, which cost the gateway and Redis system calls each. A queued
	// script is bounded by the read and write timeouts, not by its
	// caller's deadline. On a cluster the client's routing stays plain.
	var scripts processor
	if c, ok := client.(*redis.Client); ok {
		ap, err := c.AutoPipeline()
		if err != nil {
			return nil, fmt.Errorf("redis store: %w", err)
		}
		scripts = ap
	}
	keys := redisKeys{prefix: cfg.KeyPrefix}
	return &Redis{
		scripts:        scripts,
		physicalTTLArg: (cfg.TTL + redisTTLGrace).Milliseconds(),
		shareArg:       cfg.MaxTasksPerOwner,
		agentsKey:      keys.agents(),
		client:         client,
		cluster:        cluster,
		keys:           keys,
		ttl:            cfg.TTL,
		physicalTTL:    cfg.TTL + redisTTLGrace,
		maxPerOwner:    cfg.MaxTasksPerOwner,
		minAcks:        cfg.MinReplicaAcks,
		// Within the read timeout, so that a missing ack is an answer.
		ackTimeout: cfg.ReadTimeout / 2,
		now:        now,
		saves:      newSendSaves(client, cfg.WriteTimeout+cfg.ReadTimeout),
		nodes:      nodes,
	}, nil
}

// runHot runs one of a send's scripts: through the autopipeliner while
// other sends' scripts are in flight (pipelineFrom or more), where they
// share round trips; on the plain client alone, where the pipeliner's
// hand-off between goroutines costs more than the round trip it shares.
func (r *Redis) runHot(ctx context.Context, s *luaScript, args []any) *redis.Cmd {
	n := r.inFlight.Add(1)
	defer r.inFlight.Add(-1)
	if r.scripts != nil && n >= pipelineFrom {
		return s.run(ctx, r.scripts, args)
	}
	return s.run(ctx, r.client, args)
}

// windowArg is putScript's renewal window argument, boxed once.
var windowArg any = redisRenewalWindow.Milliseconds()

// pipelineFrom is the number of a send's scripts in flight at once from
// which runHot pipelines them.
const pipelineFrom = 4

// micros formats a time as the decimal microseconds the scripts store.
func micros(t time.Time) string {
	return strconv.FormatInt(t.UnixMicro(), 10)
}

// Put implements Store. It is one script, in one round trip; on a cluster
// the agent's registration in the agents set (once per agentRenewal), in
// another slot, is a command of its own in the script's pipeline.
func (r *Redis) Put(ctx context.Context, t Task) error {
	return r.put(ctx, t, nil, nil)
}

// put runs putScript for t and, when key is not nil, the write of rec as
// the send's record with it.
func (r *Redis) put(ctx context.Context, t Task, key *SendKey, rec *SendRecord) error {
	now := r.now()
	t, err := normalizeTask(t, now)
	if err != nil {
		return err
	}
	exp := now.Add(r.ttl)
	var c *putCall
	if key == nil {
		c = &putCall{}
	} else {
		sc := &putSendCall{}
		if sc.rec, err = sc.wire.encode(*rec); err != nil {
			return err
		}
		c = &sc.putCall
		c.recTTL, c.member = r.physicalSendTTL(rec.Expires), key.Key
	}
	c.task, c.now, c.exp, c.upd = t, now.UnixMicro(), exp.UnixMicro(), t.Updated.UnixMicro()
	register := r.mustRegister(t.Agent, now)
	var buf [384]byte
	var ends keyEnds
	b := append(r.keys.appendSlot(buf[:0], t.Agent), "t:"...)
	b = append(b, t.ID...)
	ends.end(b)
	b = r.keys.appendBucket(b, t.Agent, t.Owner)
	ends.end(b)
	b = append(r.keys.appendSlot(b, t.Agent), 'o')
	ends.end(b)
	if key != nil {
		b = r.keys.appendSendKey(b, *key)
		ends.end(b)
		b = r.keys.appendSends(b, t.Agent, key.Owner)
		ends.end(b)
	}
	ends.split(b, c.keys[:])
	if key == nil { // named by the task's, in the same slot
		c.keys[3], c.keys[4] = c.keys[0], c.keys[0]
	}
	keys := c.keys[:5]
	if !r.cluster {
		c.keys[5] = r.agentsKey
		keys = c.keys[:6]
	}
	var registerArg any = "0"
	if register {
		registerArg = "1"
	}
	args := append(scriptArgs(c.args[:], keys), &c.task.Owner, &c.now, &c.exp, r.physicalTTLArg,
		&c.task.ID, &c.task.Agent, &c.task.Backend, &c.task.ContextID, &c.task.State, &c.upd,
		r.shareArg, windowArg, registerArg)
	if key != nil {
		args = append(args, &c.rec, &c.recTTL, &c.member)
	}
	var put *redis.Cmd
	var acks *redis.Cmd
	if err := ctx.Err(); err != nil { // the autopipeliner would not see it
		return unavailable("put task", err)
	}
	if r.minAcks == 0 && !(r.cluster && register) {
		put = r.runHot(ctx, putScript, args)
		err = put.Err()
	} else {
		put, acks, err = r.putPipelined(ctx, t, register, args)
	}
	if err != nil {
		r.registered.Delete(t.Agent)
		return unavailable("put task", err)
	}
	written, err := put.Int()
	if err != nil {
		return unavailable("put task", err)
	}
	switch written {
	case 0:
		return ErrOwnerConflict
	case 2:
		return r.ownerQuota()
	case 3:
		return ErrContextConflict
	}
	if acks != nil {
		if n, err := acks.Int(); err != nil || n < r.minAcks {
			return unavailable("put task", fmt.Errorf("%d of the %d replicas store.redis.min_replica_acks asks for acknowledged the write within %s (%v)",
				n, r.minAcks, r.ackTimeout, err))
		}
	}
	return nil
}

// putPipelined runs putScript in a pipeline: on a cluster after the
// commands that register the agent, in the agents set's slot; with
// min_replica_acks before the WAIT for them.
func (r *Redis) putPipelined(ctx context.Context, t Task, register bool, args []any) (put, acks *redis.Cmd, err error) {
	run := func(script *redis.Cmd) (acks *redis.Cmd, err error) {
		_, err = r.client.Pipelined(ctx, func(p redis.Pipeliner) error {
			if r.cluster && register {
				p.SAdd(ctx, r.agentsKey, t.Agent)
				p.PExpire(ctx, r.agentsKey, r.physicalTTL)
			}
			_ = p.Process(ctx, script)
			if r.minAcks > 0 {
				acks = p.Do(ctx, "WAIT", r.minAcks, r.ackTimeout.Milliseconds())
			}
			return nil
		})
		return acks, err
	}
	put = putScript.evalSha(ctx, args)
	acks, err = run(put)
	if err != nil && isNoScript(put.Err()) {
		// A node that restarted or was promoted lacks the script: EVAL
		// loads it. The commands before it are idempotent.
		put = putScript.eval(ctx, args)
		acks, err = run(put)
	}
	return put, acks, err
}

// agentRenewal is how often Put renews its agent in the agents set, well
// within the set's time to live (the TTL plus redisTTLGrace).
const agentRenewal = redisTTLGrace / 2

// mustRegister reports whether this Put must add agent to the agents set,
// which Len reads: the first Put of an agent, then one per agentRenewal.
func (r *Redis) mustRegister(agent string, now time.Time) bool {
	if last, ok := r.registered.Load(agent); ok {
		if d := now.Sub(last.(time.Time)); d >= 0 && d < agentRenewal {
			return false
		}
	}
	r.registered.Store(agent, now)
	return true
}

func isNoScript(err error) bool {
	return err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT")
}

func (r *Redis) ownerQuota() error {
	return &LimitError{Err: ErrOwnerQuota, Limit: r.maxPerOwner, Setting: "store.redis.max_tasks_per_owner"}
}

// Known implements Store. It looks the id up in every agent, as the
// memory index does: agents are few (the gateway's configured ones), and
// Known is asked only of an id the caller's agent does not hold, so that
// no put pays for an index of ids across agents.
func (r *Redis) Known(ctx context.Context, id string) (bool, error) {
	agents, err := r.client.SMembers(ctx, r.keys.agents()).Result()
	if err != nil {
		return false, unavailable("look up task", err)
	}
	if len(agents) == 0 {
		return false, nil
	}
	exps := make([]*redis.StringCmd, len(agents))
	_, err = r.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, agent := range agents {
			exps[i] = p.HGet(ctx, r.keys.task(agent, id), "exp")
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return false, unavailable("look up task", err)
	}
	now := r.now().UnixMicro()
	known := false
	for _, c := range exps {
		exp, err := c.Int64()
		switch {
		case errors.Is(err, redis.Nil):
		case err != nil: // any agent unread: an id it holds must not pass unchecked
			return false, unavailable("look up task", err)
		case exp > now:
			known = true
		}
	}
	return known, nil
}

// Admit implements Store. It is one script, which also reads the context's
// owner that a send checks anyway.
func (r *Redis) Admit(ctx context.Context, a Admission) (string, error) {
	owner, _, _, err := r.admit(ctx, a, nil, nil, time.Time{})
	return owner, err
}

// admit runs admitScript: the admission of a and, when key is not nil,
// the claim of key for rec at the caller's claimNow (ClaimSend's), made
// only when the admission succeeds. It returns the context's owner
// (ErrNotFound for none), the record found under key ("" for none) and
// whether the claim was made.
func (r *Redis) admit(ctx context.Context, a Admission, key *SendKey, rec *SendRecord, claimNow time.Time) (string, string, bool, error) {
	now := r.now()
	var c *admitCall
	if key == nil {
		c = &admitCall{}
	} else {
		cc := &admitClaimCall{}
		var err error
		if cc.rec, err = cc.wire.encode(*rec); err != nil {
			return "", "", false, err
		}
		c = &cc.admitCall
		c.claimNow, c.recTTL, c.member = claimNow.UnixMicro(), r.physicalSendTTL(rec.Expires), key.Key
	}
	c.now, c.oldest = now.UnixMicro(), now.Add(-r.ttl).UnixMicro()
	// Absent keys are named by one that is there, in the same slot: a
	// script declares every key it touches, and a cluster routes by them.
	var buf [384]byte
	var ends keyEnds
	b := append(r.keys.appendBucket(buf[:0], a.Agent, a.Owner), ":exp"...)
	ends.end(b)
	b = append(r.keys.appendBucket(b, a.Agent, a.Owner), ":fin"...)
	ends.end(b)
	var named, claiming any = "0", "0"
	if a.ContextID != "" {
		named = "1"
		b = append(r.keys.appendSlot(b, a.Agent), "c:"...)
		b = append(b, a.ContextID...)
		ends.end(b)
	}
	if key != nil {
		claiming = "1"
		b = r.keys.appendSendKey(b, *key)
		ends.end(b)
		b = r.keys.appendSends(b, a.Agent, key.Owner)
		ends.end(b)
	}
	var built [5]string
	ends.split(b, built[:])
	c.keys = [5]string{built[0], built[1], built[0], built[0], built[0]}
	next := 2
	if a.ContextID != "" {
		c.keys[2] = built[next]
		next++
	}
	if key != nil {
		c.keys[3], c.keys[4] = built[next], built[next+1]
	}
	var limit any = 0 // owner "" is the one principal of a gateway without authentication, not bounded
	if a.Owner != "" {
		limit = r.shareArg
	}
	args := append(scriptArgs(c.args[:], c.keys[:]), &c.now, &c.oldest, limit, named, claiming)
	if key != nil {
		args = append(args, &c.claimNow, &c.rec, &c.recTTL, &c.member)
	}
	if err := ctx.Err(); err != nil { // the autopipeliner would not see it
		return "", "", false, unavailable("admit task", err)
	}
	reply, err := r.runHot(ctx, admitScript, args).Slice()
	if err != nil {
		return "", "", false, unavailable("admit task", err)
	}
	if len(reply) != 4 {
		return "", "", false, unavailable("admit task", fmt.Errorf("unexpected reply of %d elements", len(reply)))
	}
	verdict, _ := reply[0].(int64)
	prior, _ := reply[1].(string)
	switch verdict {
	case admitQuota:
		return "", "", false, r.ownerQuota()
	case admitClaimed, admitHeld:
	default:
		return "", "", false, unavailable("admit task", fmt.Errorf("unexpected verdict %v", reply[0]))
	}
	claimed := verdict == admitClaimed && key != nil
	if found, _ := reply[2].(int64); found == 0 {
		return "", prior, claimed, ErrNotFound
	}
	owner, _ := reply[3].(string)
	return owner, prior, claimed, nil
}

// Get implements Store.
func (r *Redis) Get(ctx context.Context, agent, id string) (Task, error) {
	fields, err := r.client.HGetAll(ctx, r.keys.task(agent, id)).Result()
	if err != nil {
		return Task{}, unavailable("get task", err)
	}
	if len(fields) == 0 {
		return Task{}, ErrNotFound
	}
	t, expires, err := decodeTask(agent, id, fields)
	if err != nil {
		return Task{}, err
	}
	if expires <= r.now().UnixMicro() {
		return Task{}, ErrNotFound
	}
	return t, nil
}

// decodeTask decodes the hash of agent's task id and its expiry in
// microseconds.
func decodeTask(agent, id string, fields map[string]string) (t Task, expires int64, err error) {
	expires, err1 := strconv.ParseInt(fields["exp"], 10, 64)
	updated, err2 := strconv.ParseInt(fields["upd"], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return Task{}, 0, unavailable("decode task", err)
	}
	return Task{
		ID:        id,
		ContextID: fields["ctx"],
		Owner:     fields["owner"],
		Agent:     agent,
		Backend:   fields["backend"],
		State:     fields["state"],
		Updated:   fromMicros(updated),
	}, expires, nil
}

// readErr is the error of a read of one key that failed: ErrNotFound where
// the key is missing, else ErrUnavailable.
func readErr(op string, err error) error {
	if errors.Is(err, redis.Nil) {
		return ErrNotFound
	}
	return unavailable(op, err)
}

// ContextOwner implements Store.
func (r *Redis) ContextOwner(ctx context.Context, agent, contextID string) (string, error) {
	if contextID == "" {
		return "", ErrNotFound
	}
	v, err := r.client.Get(ctx, r.keys.context(agent, contextID)).Result()
	if err != nil {
		return "", readErr("get context owner", err)
	}
	exp, owner, ok := strings.Cut(v, "|")
	expires, err := strconv.ParseInt(exp, 10, 64)
	if !ok || err != nil {
		return "", unavailable("decode context", fmt.Errorf("malformed value of %d bytes", len(v)))
	}
	if expires <= r.now().UnixMicro() {
		return "", ErrNotFound
	}
	return owner, nil
}

// List implements Store.
func (r *Redis) List(ctx context.Context, q Query) (Page, error) {
	cur, err := startList(q)
	if err != nil {
		return Page{}, err
	}
	maxScore := "+inf"
	if !q.UpdatedAfter.IsZero() {
		maxScore = strconv.FormatInt(-afterMicros(q.UpdatedAfter), 10)
	}
	cursorScore, cursorID := "", ""
	if cur != nil {
		cursorScore, cursorID = strconv.FormatInt(-cur.Updated, 10), cur.ID
	}
	ak := r.keys.agent(q.Agent)
	reply, err := listScript.Run(ctx, r.client, []string{ak.bucket(q.Owner)},
		ak.taskPrefix(), q.Owner, micros(r.now()), q.ContextID, q.State,
		maxScore, cursorScore, cursorID, q.PageSize, r.maxPerOwner, q.OrUnfinished,
	).Slice()
	if err != nil {
		return Page{}, unavailable("list tasks", err)
	}
	if len(reply) == 2 && reply[0] == int64(-1) {
		return Page{}, &LimitError{Err: ErrListTooBroad, Limit: r.maxPerOwner, Setting: "store.redis.max_tasks_per_owner"}
	}
	return r.parsePage(q, reply)
}

func (r *Redis) parsePage(q Query, reply []any) (Page, error) {
	if len(reply) < 2 {
		return Page{}, unavailable("decode task page", fmt.Errorf("short reply of %d elements", len(reply)))
	}
	total, ok1 := reply[0].(int64)
	more, ok2 := reply[1].(int64)
	if !ok1 || !ok2 {
		return Page{}, unavailable("decode task page", fmt.Errorf("unexpected reply header %T, %T", reply[0], reply[1]))
	}
	if len(reply)%2 != 0 {
		return Page{}, unavailable("decode task page", fmt.Errorf("odd reply of %d elements", len(reply)))
	}
	page := Page{Tasks: make([]Task, 0, len(reply)/2-1), TotalSize: int(total)}
	now := r.now().UnixMicro()
	var last Task // the cursor follows the last task scanned, even one not shown
	for i := 2; i < len(reply); i += 2 {
		id, ok1 := reply[i].(string)
		flat, ok2 := reply[i+1].([]any)
		if !ok1 || !ok2 || len(flat)%2 != 0 {
			return Page{}, unavailable("decode task page", fmt.Errorf("unexpected task reply %T, %T", reply[i], reply[i+1]))
		}
		fields := make(map[string]string, len(flat)/2)
		for j := 0; j < len(flat); j += 2 {
			k, _ := flat[j].(string)
			v, _ := flat[j+1].(string)
			fields[k] = v
		}
		if len(fields) == 0 {
			continue // reclaimed by Redis in the grace period; nothing to show
		}
		t, expires, err := decodeTask(q.Agent, id, fields)
		if err != nil {
			return Page{}, err
		}
		last = t
		// A replica whose clock lags may still index a task that another
		// replica saw expire and handed to a new owner; never show it.
		if expires > now && t.Owner == q.Owner {
			page.Tasks = append(page.Tasks, t)
		}
	}
	if more == 1 && last.ID != "" {
		page.NextPageToken = encodePageToken(q, last)
	}
	return page, nil
}

// Len implements Store. It counts each agent's live tasks owner by owner,
// in each owner's exp index: a scrape's cost grows with the owners, so
// that no put pays for a count of its own.
func (r *Redis) Len(ctx context.Context) (int, error) {
	agents, err := r.client.SMembers(ctx, r.keys.agents()).Result()
	if err != nil {
		return 0, unavailable("count tasks", err)
	}
	total := 0
	for _, agent := range agents {
		n, err := r.agentLen(ctx, r.keys.agent(agent))
		if err != nil {
			return 0, unavailable("count tasks", err)
		}
		total += n
	}
	return total, nil
}

// lenBatch is how many owners Len reads in one pipeline: Redis serves
// every replica from one thread, and a scrape must not hold it long.
const lenBatch = 512

// agentLen counts the live tasks of one agent's owners, a batch of owners
// at a time, and prunes from the owners set those whose indexes are gone.
func (r *Redis) agentLen(ctx context.Context, ak agentKeys) (int, error) {
	since := "(" + micros(r.now())
	seen := map[string]struct{}{} // SSCAN may return an owner twice
	total := 0
	var cursor uint64
	for {
		owners, next, err := r.client.SScan(ctx, ak.owners(), cursor, "", lenBatch).Result()
		if err != nil {
			return 0, err
		}
		owners = slices.DeleteFunc(owners, func(o string) bool {
			_, dup := seen[o]
			seen[o] = struct{}{}
			return dup
		})
		counts := make([]*redis.IntCmd, len(owners))
		if _, err := r.client.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, o := range owners {
				counts[i] = p.ZCount(ctx, ak.expIndex(o), since, "+inf")
			}
			return nil
		}); err != nil {
			return 0, err
		}
		var idle []string
		for i, c := range counts {
			total += int(c.Val())
			if c.Val() == 0 {
				idle = append(idle, owners[i])
			}
		}
		if err := r.pruneOwners(ctx, ak, idle); err != nil {
			return 0, err
		}
		if cursor = next; cursor == 0 {
			return total, nil
		}
	}
}

// pruneOwners runs pruneOwnersScript for owners, which hold no live task.
func (r *Redis) pruneOwners(ctx context.Context, ak agentKeys, owners []string) error {
	if len(owners) == 0 {
		return nil
	}
	keys := make([]string, 1, len(owners)+1)
	keys[0] = ak.owners()
	args := make([]any, len(owners))
	for i, o := range owners {
		keys = append(keys, ak.expIndex(o))
		args[i] = o
	}
	return pruneOwnersScript.Run(ctx, r.client, keys, args...).Err()
}

// Ping implements Store. In cluster mode it asks for the cluster's state:
// any node answers PING, but with a slot uncovered (a primary lost and no
// replica promoted yet) the agents in it cannot be served.
func (r *Redis) Ping(ctx context.Context) error {
	cluster, ok := r.client.(*redis.ClusterClient)
	if !ok {
		if err := r.client.Ping(ctx).Err(); err != nil {
			return unavailable("ping", err)
		}
		return nil
	}
	info, err := cluster.ClusterInfo(ctx).Result()
	if err != nil {
		return unavailable("ping", err)
	}
	if !strings.Contains(info, "cluster_state:ok") {
		return unavailable("ping", errors.New("the Redis Cluster reports cluster_state:fail: some hash slots have no reachable primary"))
	}
	return nil
}

// Close writes the send records waiting, within the time two writes may
// take (one in flight, the last), and closes the connections to Redis.
func (r *Redis) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*r.saves.timeout)
	r.saves.close(ctx)
	cancel()
	if err := r.client.Close(); err != nil && !errors.Is(err, redis.ErrClosed) {
		return unavailable("close", err)
	}
	return nil
}
