package store

import "github.com/redis/go-redis/v9"

// The scripts run atomically in Redis, which is what makes Put's owner rule
// hold across replicas: the check and the write cannot interleave with
// another replica's. Time comes from the caller (ARGV now, expiry), never
// from the Redis clock, so every replica and the tests agree on what is
// expired; the keys' own Redis TTLs only reclaim memory and are longer than
// the logical lifetime (see redisTTLGrace).
//
// Numbers that must stay exact (microsecond timestamps, near 2^51) travel as
// strings and are compared with tonumber, which is exact below 2^53; they are
// never formatted by Lua, whose tostring keeps only 14 digits. Lua compares
// strings with strcoll, which depends on Redis's locale, so byte order is
// spelled out in bytesLess.

// luaCommon holds the functions shared by the scripts.
const luaCommon = `
local function neg(s)
  if string.sub(s, 1, 1) == '-' then return string.sub(s, 2) end
  return '-' .. s
end

local function bytesLess(a, b)
  local n = math.min(#a, #b)
  for i = 1, n do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end

-- meta values are "<len(state)>:<state><context>".
local function splitMeta(m)
  local n, rest = string.match(m, '^(%d+):(.*)$')
  n = tonumber(n)
  return string.sub(rest, 1, n), string.sub(rest, n + 1)
end

-- dropMeta drops task id from bucket's state and context indexes and its meta.
local function dropMeta(bucket, id)
  local meta = bucket .. ':meta'
  local m = redis.call('HGET', meta, id)
  if m then
    local state, ctx = splitMeta(m)
    redis.call('ZREM', bucket .. ':s:' .. state, id)
    if ctx ~= '' then redis.call('ZREM', bucket .. ':c:' .. ctx, id) end
    redis.call('HDEL', meta, id)
  end
end

-- purge drops the expired tasks of one bucket from its indexes, so that
-- counts and pages see only live tasks. Each task is purged once, so the
-- cost is constant per task over its lifetime.
local function purge(bucket, taskPrefix, owner, now)
  local expired = redis.call('ZRANGEBYSCORE', bucket .. ':exp', '-inf', now)
  if #expired == 0 then return end
  for _, id in ipairs(expired) do
    dropMeta(bucket, id)
    redis.call('ZREM', bucket .. ':all', id)
    redis.call('ZREM', bucket .. ':fin', id)
    -- The id may belong to another owner by now; only our own expired copy goes.
    local tk = taskPrefix .. id
    local h = redis.call('HMGET', tk, 'owner', 'exp')
    if h[1] == owner and h[2] and tonumber(h[2]) <= tonumber(now) then
      redis.call('DEL', tk)
    end
  end
  redis.call('ZREMRANGEBYSCORE', bucket .. ':exp', '-inf', now)
end

-- evict drops the live task id of bucket from every index, for the owner's
-- share. The context keeps its owner until its own expiry, which is the
-- latest of its tasks'. The id stays known across agents (Known, in another
-- slot) until it would have expired: a known id is never served unchecked.
local function evict(bucket, taskPrefix, id, count, countMember)
  dropMeta(bucket, id)
  for _, suffix in ipairs({':all', ':exp', ':fin'}) do redis.call('ZREM', bucket .. suffix, id) end
  redis.call('DEL', taskPrefix .. id)
  redis.call('ZREM', count, countMember)
end

-- shareFull reports whether owner's share of bucket is full; owner '' is
-- the one principal of a gateway without authentication, not bounded.
local function shareFull(bucket, owner, maxPerOwner)
  return owner ~= '' and redis.call('ZCARD', bucket .. ':exp') >= tonumber(maxPerOwner)
end

local function finalState(state)
  return state == 'TASK_STATE_COMPLETED' or state == 'TASK_STATE_CANCELED' or
    state == 'TASK_STATE_FAILED' or state == 'TASK_STATE_REJECTED'
end
`

// putScript implements Redis.Put and Redis.PutSend. It returns 1 when
// written, 0 on an owner conflict, 2 when the owner's share is full of
// tasks that are not final.
//
//	KEYS: task, bucket, count, the send's record (the task in place of
//	      none; all in the agent's slot); on one node also the id's agents
//	      and the agents set (in other slots)
//	ARGV: owner, now, expiry, physical TTL (ms), id, agent, backend,
//	      context, state, updated, max tasks per owner, renewal window
//	      (ms), "1" to add the agent to the agents set, then for PutSend
//	      the send's record and its TTL (ms)
//
// The task and context key prefixes and the count member are derived
// here from the task key and the owner rather than sent: every argument
// is one more for the client to encode and Redis to parse. The send's
// record is written only with the task, after every refusal. On a
// cluster, Put writes the id's agents and the agents set by commands of
// their own, in the script's pipeline.
var putScript = redis.NewScript(luaCommon + `
local task, bucket, count = KEYS[1], KEYS[2], KEYS[3]
local owner, now, exp, ttl = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local id, agent, backend, ctx, state, upd = ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9], ARGV[10]
local maxPerOwner, window = ARGV[11], ARGV[12]
local taskPrefix = string.sub(task, 1, #task - #id)
local ctxPrefix = string.sub(taskPrefix, 1, -3) .. 'c:'
local memberPrefix = #owner .. ':' .. owner .. ':'
local member = memberPrefix .. id

-- Written even when the task is then refused: an id held by another owner,
-- or refused for a full share, is known all the same, and a known id is
-- never served unchecked.
if KEYS[5] then
  redis.call('ZADD', KEYS[5], 'GT', exp, agent)
  redis.call('PEXPIRE', KEYS[5], ttl)
  if ARGV[13] == '1' then
    redis.call('SADD', KEYS[6], agent)
    redis.call('PEXPIRE', KEYS[6], ttl)
  end
end

purge(bucket, taskPrefix, owner, now)

local cur = redis.call('HMGET', task, 'owner', 'exp', 'ctx', 'state', 'upd')
if cur[2] and tonumber(cur[2]) > tonumber(now) then
  if cur[1] ~= owner then return 0 end
  local oldCtx, oldState, oldUpd = cur[3], cur[4], cur[5]
  if oldCtx ~= '' then ctx = oldCtx end
  if tonumber(upd) < tonumber(oldUpd) then
    state, upd = oldState, oldUpd
  end
  if oldState ~= state then redis.call('ZREM', bucket .. ':s:' .. oldState, id) end
  redis.call('HSET', task, 'ctx', ctx, 'state', state, 'upd', upd, 'exp', exp)
else
  if shareFull(bucket, owner, maxPerOwner) then
    local oldest = redis.call('ZRANGE', bucket .. ':fin', 0, 0)
    if #oldest == 0 then return 2 end
    evict(bucket, taskPrefix, oldest[1], count, memberPrefix .. oldest[1])
  end
  -- HSET sets every field, so an expired task's hash needs no DEL first.
  redis.call('HSET', task, 'id', id, 'agent', agent, 'owner', owner, 'backend', backend,
    'ctx', ctx, 'state', state, 'upd', upd, 'exp', exp)
end

local score = neg(upd)
-- Every key this put adds to outlives the tasks in it: its TTL is renewed
-- here. all, exp and meta hold the same ids, are emptied together and are
-- renewed together, so when exp's TTL was renewed within the window, all
-- three outlive any task put now, by the grace less the window, and need no
-- renewal. Each member of fin and of a state index was added with a renewal.
local keys = {task, count, bucket .. ':s:' .. state}
if redis.call('PTTL', bucket .. ':exp') < tonumber(ttl) - tonumber(window) then
  table.insert(keys, bucket .. ':all')
  table.insert(keys, bucket .. ':exp')
  table.insert(keys, bucket .. ':meta')
end
redis.call('ZADD', bucket .. ':all', score, id)
if finalState(state) then
  redis.call('ZADD', bucket .. ':fin', now, id)
  table.insert(keys, bucket .. ':fin')
else
  redis.call('ZREM', bucket .. ':fin', id)
end
redis.call('ZADD', bucket .. ':s:' .. state, score, id)
redis.call('ZADD', bucket .. ':exp', exp, id)
redis.call('HSET', bucket .. ':meta', id, #state .. ':' .. state .. ctx)
redis.call('ZADD', count, exp, member)
if ctx ~= '' then
  redis.call('ZADD', bucket .. ':c:' .. ctx, score, id)
  table.insert(keys, bucket .. ':c:' .. ctx)
  local ck = ctxPrefix .. ctx
  local c = redis.call('HMGET', ck, 'owner', 'exp')
  if c[2] and tonumber(c[2]) > tonumber(now) then
    if tonumber(exp) > tonumber(c[2]) then redis.call('HSET', ck, 'exp', exp) end
  else
    redis.call('HSET', ck, 'owner', owner, 'exp', exp)
  end
  table.insert(keys, ck)
end
for _, k in ipairs(keys) do redis.call('PEXPIRE', k, ttl) end
if ARGV[14] then redis.call('SET', KEYS[4], ARGV[14], 'PX', ARGV[15]) end
return 1
`)

// listScript implements Redis.List. It returns {total, more, task...} where
// each task is a flat HGETALL reply and more is 1 when a further page exists.
//
//	KEYS: bucket
//	ARGV: taskPrefix, owner, now, index suffix, residual state filter,
//	      max score, cursor score ("" on the first page), cursor id, page size
//
// The index is the narrowest one the filters allow (context, else state,
// else all); the state filter is checked per task only together with a
// context filter, where the index is small. UpdatedAfter is the max score.
var listScript = redis.NewScript(luaCommon + `
local bucket = KEYS[1]
local taskPrefix, owner, now, suffix, residual, maxScore = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]
local cursorScore, cursorID, size = ARGV[7], ARGV[8], tonumber(ARGV[9])

purge(bucket, taskPrefix, owner, now)

local index, meta = bucket .. ':' .. suffix, bucket .. ':meta'
local function keep(id)
  if residual == '' then return true end
  local m = redis.call('HGET', meta, id)
  return m ~= false and splitMeta(m) == residual
end

local total = 0
if residual == '' then
  total = redis.call('ZCOUNT', index, '-inf', maxScore)
else
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', index, '-inf', maxScore)) do
    if keep(id) then total = total + 1 end
  end
end

local min, cursorNum = '-inf', nil
if cursorScore ~= '' then min, cursorNum = cursorScore, tonumber(cursorScore) end
local ids, offset, chunk = {}, 0, 2 * size + 16
while #ids <= size do
  local batch = redis.call('ZRANGEBYSCORE', index, min, maxScore, 'WITHSCORES', 'LIMIT', offset, chunk)
  for i = 1, #batch, 2 do
    local id = batch[i]
    local seen = cursorNum ~= nil and tonumber(batch[i + 1]) == cursorNum and not bytesLess(cursorID, id)
    if not seen and keep(id) then
      ids[#ids + 1] = id
      if #ids > size then break end
    end
  end
  if #batch < 2 * chunk then break end
  offset = offset + chunk
end

local out = {total, 0}
if #ids > size then
  out[2] = 1
  ids[#ids] = nil
end
for _, id in ipairs(ids) do out[#out + 1] = redis.call('HGETALL', taskPrefix .. id) end
return out
`)

// lenScript implements Redis.Len.
//
//	KEYS: count
//	ARGV: now
var lenScript = redis.NewScript(`
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
return redis.call('ZCARD', KEYS[1])
`)

// admitScript implements Redis.Admit and, with the claim, Redis.ClaimSend:
// the admission and the claim in one script, so that a claim is made only
// for a send admitted, in one round trip, with nothing to take back.
//
//	KEYS: the owner's exp index, its fin index, the context's hash, the
//	      send's record (the exp index in place of an absent one; all in
//	      the agent's slot)
//	ARGV: now, the oldest put of a final task still live, the owner's
//	      share (0: unbounded), "1" when a context is named, "1" to claim,
//	      then for a claim: the caller's now, the record, its TTL (ms)
//
// It returns {verdict, the record found or "", 1 when the context is live,
// its owner}. Verdict 2: the owner's share is full of tasks that are not
// final (nothing claimed); 0: a live record holds the key; 1: admitted
// and, when asked, claimed. A record that expired by the caller's now, or
// one of a send not accepted, is claimed over and returned as found.
var admitScript = redis.NewScript(`
local now, limit = ARGV[1], tonumber(ARGV[3])
if limit > 0 and redis.call('ZCOUNT', KEYS[1], '(' .. now, '+inf') >= limit and
   redis.call('ZCOUNT', KEYS[2], '(' .. ARGV[2], '+inf') == 0 then
  return {2, '', 0, ''}
end
local live, owner = 0, ''
if ARGV[4] == '1' then
  local c = redis.call('HMGET', KEYS[3], 'owner', 'exp')
  if c[1] and c[2] and tonumber(c[2]) > tonumber(now) then live, owner = 1, c[1] end
end
if ARGV[5] ~= '1' then return {1, '', live, owner} end
local v = redis.call('GET', KEYS[4])
if v then
  local e = string.match(v, '^(%d+)|')
  if not (e and tonumber(e) > tonumber(ARGV[6])) then
    v = ''
  elseif not string.find(v, '"s":"not_accepted"', 1, true) then
    return {0, v, live, owner}
  end
else
  v = ''
end
redis.call('SET', KEYS[4], ARGV[7], 'PX', ARGV[8])
return {1, v, live, owner}
`)

// Verdicts of admitScript.
const (
	admitHeld    = 0
	admitClaimed = 1
	admitQuota   = 2
)
