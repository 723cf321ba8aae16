package store

import (
	"context"
	"slices"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// A send's scripts run from commands built by their callers in one slice
// each, rather than by go-redis's Eval, which copies the keys and arguments
// into a slice of its own and boxes each again. The slice and the values it
// points at are one allocation per call (putCall, admitCall, claimCall): a
// string or a number boxed in an interface is an allocation of its own, a
// pointer to one is not, and go-redis writes *string and *int64 arguments
// as it writes strings and int64s.

// luaScript is a script run by its SHA, and in full when Redis lacks it.
type luaScript struct {
	src, sha string
}

func newLuaScript(src string) *luaScript {
	return &luaScript{src: src, sha: redis.NewScript(src).Hash()}
}

// processor is what runs a command: the client, the autopipeliner or a
// pipeline.
type processor interface {
	Process(ctx context.Context, cmd redis.Cmder) error
}

// scriptArgs returns the start of a script command's arguments in buf: its
// name and SHA, which evalSha fills, then the number of keys and the keys,
// each pointing at its place in keys. The caller appends the script's
// arguments.
func scriptArgs(buf []any, keys []string) []any {
	args := buf[:3+len(keys)]
	args[2] = len(keys)
	for i := range keys {
		args[3+i] = &keys[i]
	}
	return args
}

// evalSha returns s's EVALSHA of args (scriptArgs).
func (s *luaScript) evalSha(ctx context.Context, args []any) *redis.Cmd {
	args[0], args[1] = "evalsha", &s.sha
	return scriptCmd(ctx, args)
}

// eval returns s's EVAL of args (scriptArgs), which loads the script into
// a Redis that lacks it. It copies args: the EVALSHA's command keeps its.
func (s *luaScript) eval(ctx context.Context, args []any) *redis.Cmd {
	args = slices.Clone(args)
	args[0], args[1] = "eval", &s.src
	return scriptCmd(ctx, args)
}

func scriptCmd(ctx context.Context, args []any) *redis.Cmd {
	cmd := redis.NewCmd(ctx, args...)
	cmd.SetFirstKeyPos(3)
	return cmd
}

// run runs s with args (scriptArgs) on c: by its SHA, then in full when
// Redis lacks it (after a restart, a failover or a SCRIPT FLUSH).
func (s *luaScript) run(ctx context.Context, c processor, args []any) *redis.Cmd {
	cmd := s.evalSha(ctx, args)
	_ = c.Process(ctx, cmd)
	if isNoScript(cmd.Err()) {
		cmd = s.eval(ctx, args)
		_ = c.Process(ctx, cmd)
	}
	return cmd
}

// putCall is one run of putScript (Redis.put).
type putCall struct {
	args                  [3 + 6 + 16]any
	keys                  [6]string
	task                  Task
	now, exp, upd, recTTL int64
	member                string
	rec                   wireBytes
}

// putSendCall is a putCall that writes a send's record, with the record's
// encoding: a put without one (a stream's status updates) does not carry
// its buffers.
type putSendCall struct {
	putCall
	wire sendWire
}

// admitCall is one run of admitScript (Redis.admit).
type admitCall struct {
	args                          [3 + 5 + 9]any
	keys                          [5]string
	now, oldest, claimNow, recTTL int64
	member                        string
	rec                           wireBytes
}

// admitClaimCall is an admitCall that claims a send's key, with the
// record's encoding.
type admitClaimCall struct {
	admitCall
	wire sendWire
}

// claimCall is one run of claimSendScript (Redis.claimWith).
type claimCall struct {
	args                  [3 + 2 + 6]any
	keys                  [2]string
	now, storeNow, recTTL int64
	member                string
	rec                   wireBytes
	wire                  sendWire
}

// The keys of one call are written into one buffer, then made one string
// of which each key is a part (keyEnds): one allocation for the call's
// keys, where a key made by concatenation is at least one each. The
// appenders write the layout of redisKeys (TestRedisCallKeys holds the two
// together); they are functions of the buffer, not methods of a builder
// holding it, so that a buffer on the caller's stack stays there.

func appendLengthPrefixed(b []byte, s string) []byte {
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, ':')
	return append(b, s...)
}

// appendTag appends agent's hash tag (agentTag).
func appendTag(b []byte, agent string) []byte {
	b = append(b, '{')
	b = appendLengthPrefixed(b, agent)
	return append(b, '}')
}

// appendSlot appends the common start of agent's keys (redisKeys.agentSlot).
func (k redisKeys) appendSlot(b []byte, agent string) []byte {
	b = append(b, k.prefix...)
	b = append(b, redisLayout...)
	return appendTag(b, agent)
}

// appendBucket appends the common start of owner's index keys
// (agentKeys.bucket).
func (k redisKeys) appendBucket(b []byte, agent, owner string) []byte {
	b = append(k.appendSlot(b, agent), "b:"...)
	return appendLengthPrefixed(b, owner)
}

// appendSendKey appends the key of a send's record (redisKeys.sendKey).
func (k redisKeys) appendSendKey(b []byte, key SendKey) []byte {
	b = appendTag(append(b, k.prefix...), key.Agent)
	b = appendLengthPrefixed(append(b, "r:"...), key.Owner)
	b = append(b, ':')
	return append(b, key.Key...)
}

// appendSends appends the key of owner's send records' index
// (agentKeys.sends).
func (k redisKeys) appendSends(b []byte, agent, owner string) []byte {
	b = append(k.appendSlot(b, agent), "rs:"...)
	return append(b, owner...)
}

// sendKeys is the key of a send's record and that of its owner's index of
// them, the keys a claim and a save of the record are sent with.
func (k redisKeys) sendKeys(key SendKey) [2]string {
	var buf [256]byte
	var ends keyEnds
	b := k.appendSendKey(buf[:0], key)
	ends.end(b)
	b = k.appendSends(b, key.Agent, key.Owner)
	ends.end(b)
	var keys [2]string
	ends.split(b, keys[:])
	return keys
}

// keyEnds marks where each key written into a buffer ends.
type keyEnds struct {
	ends [6]int
	n    int
}

// end marks the end of a key at b's end.
func (e *keyEnds) end(b []byte) {
	e.ends[e.n] = len(b)
	e.n++
}

// split sets dst to the keys of b, in order.
func (e *keyEnds) split(b []byte, dst []string) {
	s := string(b)
	start := 0
	for i, end := range e.ends[:e.n] {
		dst[i] = s[start:end]
		start = end
	}
}
