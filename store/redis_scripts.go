package store

import (
	"strconv"

	"github.com/redis/go-redis/v9"
)

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

-- num reads a number as the scripts write them (decimal digits, which
-- Go's ParseInt reads alike), nil for anything else: tonumber also takes
-- 'nan', 'inf', hex and spaces, which no replica writes.
local function num(s)
  if s and #s <= 20 and string.match(s, '^%-?%d+$') then return tonumber(s) end
  return nil
end

-- corrupt is the error of a key whose value no replica wrote, naming it,
-- for the script to return: read as absent, it would let another caller
-- take the id or the context.
local function corrupt(key) return redis.error_reply('corrupt value at ' .. key) end

local function bytesLess(a, b)
  local n = math.min(#a, #b)
  for i = 1, n do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end

-- purge drops the expired tasks of one bucket from its indexes, so that
-- counts and pages see only live tasks, and deletes their hashes. Each task
-- is purged once, so the cost is constant per task over its lifetime.
local function purge(bucket, taskPrefix, owner, now)
  local expired = redis.call('ZRANGEBYSCORE', bucket .. ':exp', '-inf', now)
  if #expired == 0 then return end
  for _, id in ipairs(expired) do
    redis.call('ZREM', bucket .. ':all', id)
    redis.call('ZREM', bucket .. ':fin', id)
    -- The id may belong to another owner by now; only our own expired copy goes.
    -- A key of another type, or an exp no replica wrote, is left to its
    -- Redis TTL (Put refuses its id): failing here would fail every put
    -- and list of the owner for as long as it stays in the index.
    local tk = taskPrefix .. id
    local h = redis.pcall('HMGET', tk, 'owner', 'exp', 'ctx')
    local e = not h.err and num(h[2])
    if e and h[1] == owner and e <= tonumber(now) then
      redis.call('DEL', tk)
      if h[3] and h[3] ~= '' then redis.call('ZREM', bucket .. ':c:' .. h[3], id) end
    end
  end
  redis.call('ZREMRANGEBYSCORE', bucket .. ':exp', '-inf', now)
end

-- evict drops the owner's final task put least recently from every index,
-- for the owner's share, and reports whether there was one. The context
-- keeps its owner until its own expiry, which is the latest of its tasks'.
local function evict(bucket, taskPrefix)
  local oldest = redis.call('ZPOPMIN', bucket .. ':fin')
  if #oldest == 0 then return false end
  local id = oldest[1]
  redis.call('ZREM', bucket .. ':all', id)
  redis.call('ZREM', bucket .. ':exp', id)
  -- A key of another type there is not the task: out of the indexes,
  -- it is left to its Redis TTL rather than failing every new task.
  local ctx = redis.pcall('HGET', taskPrefix .. id, 'ctx')
  if type(ctx) == 'table' then return true end
  if ctx and ctx ~= '' then redis.call('ZREM', bucket .. ':c:' .. ctx, id) end
  redis.call('DEL', taskPrefix .. id)
  return true
end

local function finalState(state)
  return state == 'TASK_STATE_COMPLETED' or state == 'TASK_STATE_CANCELED' or
    state == 'TASK_STATE_FAILED' or state == 'TASK_STATE_REJECTED'
end
`

// luaRecord holds the functions the scripts that write send records share.
var luaRecord = `
-- countRecord counts the send record recKey (of key member), just added to
-- its owner's index idx of n records, and drops the owner's records written
-- least recently past limit. The index outlives its records: its TTL is
-- renewed to the record's ttl unless it was within the renewal window.
local function countRecord(idx, n, recKey, member, limit, ttl)
  if n == 1 or redis.call('PTTL', idx) < tonumber(ttl) - ` + strconv.FormatInt(redisRenewalWindow.Milliseconds(), 10) + ` then
    redis.call('PEXPIRE', idx, ttl)
  end
  if n <= limit then return end
  local recPrefix = string.sub(recKey, 1, #recKey - #member)
  local popped = redis.call('ZPOPMIN', idx, n - limit)
  for i = 1, #popped, 2 do
    local m = popped[i]
    if m ~= member then
      redis.call('DEL', recPrefix .. m)
    else
      -- A tie of scores put the new record among the oldest: it stays,
      -- and the oldest other goes in its place.
      redis.call('ZADD', idx, popped[i + 1], m)
      for _, o in ipairs(redis.call('ZRANGE', idx, 0, 1)) do
        if o ~= member then
          redis.call('ZREM', idx, o)
          redis.call('DEL', recPrefix .. o)
          break
        end
      end
    end
  end
end

-- keepRecord orders the send record recKey (of key member) in its owner's
-- index idx by its last write (score) and counts it there when new, within
-- limit (0: unbounded, the one principal of a gateway without
-- authentication, which has no index).
-- claimRecord writes rec at recKey unless recKey holds a live record of
-- a send that was not refused ("not_accepted"): it returns true and the
-- record it replaced ('' for none or an expired one), or false and the live
-- record. A key with no record, the usual case, is claimed by the SET NX alone.
local function claimRecord(recKey, rec, ttl, now)
  if redis.call('SET', recKey, rec, 'NX', 'PX', ttl) then return true, '' end
  local v = redis.call('GET', recKey) or ''
  local e = string.match(v, '^(%d+)|')
  if not (e and tonumber(e) > tonumber(now)) then
    v = ''
  elseif not string.find(v, '"s":"not_accepted"', 1, true) then
    return false, v
  end
  redis.call('SET', recKey, rec, 'PX', ttl)
  return true, v
end

local function keepRecord(idx, recKey, member, score, limit, ttl)
  limit = tonumber(limit)
  if limit <= 0 then return end
  if redis.call('ZADD', idx, score, member) == 0 then return end
  countRecord(idx, redis.call('ZCARD', idx), recKey, member, limit, ttl)
end
`

// putScript implements Redis.Put and Redis.PutSend. It returns 1 when
// written, 0 on an owner conflict, 2 when the owner's share is full of
// tasks that are not final, 3 when the context named is another owner's.
//
//	KEYS: task, bucket, owners set, the send's record, the owner's record index
//	      (the task in place of none; all in the agent's slot); on one node
//	      also the agents set (in another slot)
//	ARGV: owner, now, expiry, physical TTL (ms), id, agent, backend,
//	      context, state, updated, max tasks per owner, renewal window
//	      (ms), "1" to renew the agent's keys (and add it to the agents
//	      set), then for PutSend the send's record, its TTL (ms) and key
//
// The task and context key prefixes are derived here from the task key
// rather than sent: every argument
// is one more for the client to encode and Redis to parse. The send's
// record is written only with the task, after every refusal. On a
// cluster, Put writes the agents set by a command of its own, in the
// script's pipeline.
var putScript = newLuaScript(luaCommon + luaRecord + `
-- restoreCtx puts back the context's value held (false for none) that a
-- put's SET ... GET replaced (when set), live until heldExp (nil when it
-- was not live: nothing to keep), with the physical TTL its writer gave
-- it: the put's own (ttl, for the put's expiry exp) moved by the
-- difference of the two expiries.
local function restoreCtx(set, ck, held, heldExp, exp, ttl)
  if not set then return end
  if not heldExp then
    redis.call('DEL', ck)
  else
    redis.call('SET', ck, held, 'PX', ttl + math.floor((heldExp - exp) / 1000))
  end
end

local task, bucket, owners = KEYS[1], KEYS[2], KEYS[3]
local owner, now, exp, ttl = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local id, agent, backend, ctx, state, upd = ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9], ARGV[10]
local maxPerOwner, window = ARGV[11], ARGV[12]
-- Each number converted once, each index's name built once: a string
-- made in Lua is interned, a number parsed by strtod.
local nowN, expN, ttlN = tonumber(now), tonumber(exp), tonumber(ttl)
local windowMs = tonumber(window)
local allIdx, expIdx, finIdx = bucket .. ':all', bucket .. ':exp', bucket .. ':fin'
local taskPrefix = string.sub(task, 1, #task - #id)
local ctxPrefix = string.sub(taskPrefix, 1, -3) .. 'c:'

purge(bucket, taskPrefix, owner, now)

local cur = redis.call('HMGET', task, 'owner', 'exp', 'ctx', 'state', 'upd', 'ren')
-- A hash without a readable exp is not absent: read so ('nan', a field
-- lost), another owner would take the id.
local curExp = num(cur[2])
if not curExp and (cur[1] or cur[2]) then return corrupt(task) end
local live = curExp and curExp > nowN
if live and cur[1] ~= owner then return 0 end
-- A context has one owner: a task put in another's changes nothing. A
-- task keeps its first context: when that is the one named (the usual
-- case), the context's owner is read and written by one SET ... GET, and
-- put back as it was, within its own expiry, when the put is refused or
-- the context already lives longer (restoreCtx). Otherwise the context's
-- key, read here once, is written below.
local putCtx, ctxHeld, ctxSet, ctxExp = ctx, false, false, nil
if ctx ~= '' then
  if live and cur[3] ~= '' and cur[3] ~= ctx then
    ctxHeld = redis.call('GET', ctxPrefix .. ctx)
  else
    ctxHeld = redis.call('SET', ctxPrefix .. ctx, exp .. '|' .. owner, 'PX', ttl, 'GET')
    ctxSet = true
  end
  if ctxHeld then
    local cexp, cowner = string.match(ctxHeld, '^(%d+)|(.*)$')
    if not cexp then
      -- No replica wrote it: read as no owner, the caller would take the
      -- context. Put back as it was.
      if ctxSet then redis.call('SET', ctxPrefix .. ctx, ctxHeld, 'PX', ttl) end
      return corrupt(ctxPrefix .. ctx)
    end
    if cexp and tonumber(cexp) > nowN then ctxExp = tonumber(cexp) end
    if ctxExp and cowner ~= owner then
      restoreCtx(ctxSet, ctxPrefix .. ctx, ctxHeld, ctxExp, expN, ttlN)
      return 3
    end
  end
  if ctxSet and ctxExp and ctxExp > expN then
    restoreCtx(ctxSet, ctxPrefix .. ctx, ctxHeld, ctxExp, expN, ttlN)
  end
end
-- The context's index (ctxIndex) outlives its tasks as the owner's other
-- indexes do, renewed by each of its tasks at most once per window: the
-- task's field ren is when it last renewed it (or, with no context yet,
-- when it was made), so that the index outlives the task by the grace
-- less the window. A task's context never changes once set.
local renew = ctx ~= ''
if live then
  local oldCtx, oldState, oldUpd = cur[3], cur[4], cur[5]
  if oldCtx ~= '' then ctx = oldCtx end
  if tonumber(upd) < tonumber(oldUpd) then
    state, upd = oldState, oldUpd
  end
  -- A final state is never left (A2A: a finished task is not restarted).
  if finalState(oldState) then state = oldState end
  renew = ctx ~= '' and (oldCtx == '' or not (cur[6] and tonumber(cur[6]) >= nowN - 1000 * windowMs))
  if renew then
    redis.call('HSET', task, 'ctx', ctx, 'state', state, 'upd', upd, 'exp', exp, 'ren', now)
  else
    redis.call('HSET', task, 'ctx', ctx, 'state', state, 'upd', upd, 'exp', exp)
  end
else
  -- owner '' is the one principal of a gateway without authentication, not bounded.
  -- The purge left only live tasks in exp: its size is their number.
  if owner ~= '' and redis.call('ZCARD', expIdx) >= tonumber(maxPerOwner) and
     not evict(bucket, taskPrefix) then
    restoreCtx(ctxSet, ctxPrefix .. ctx, ctxHeld, ctxExp, expN, ttlN)
    return 2
  end
  -- HSET sets every field, so an expired task's hash needs no DEL first.
  redis.call('HSET', task, 'owner', owner, 'backend', backend, 'ctx', ctx, 'state', state, 'upd', upd, 'exp', exp, 'ren', now)
end
redis.call('PEXPIRE', task, ttl)

local final = finalState(state)
local score = neg(upd)
redis.call('ZADD', allIdx, score, id)
redis.call('ZADD', expIdx, exp, id)
if ctx ~= '' then
  local ctxIndex = bucket .. ':c:' .. ctx
  redis.call('ZADD', ctxIndex, score, id)
  if renew then redis.call('PEXPIRE', ctxIndex, ttl) end
end
if final then
  redis.call('ZADD', finIdx, now, id)
end
-- The owner's indexes outlive the tasks in them: they hold the same ids
-- (fin a part of them), are emptied together and renewed together, so
-- when the one this put added to was renewed within the window, all three
-- outlive any task put now by the grace less the window. A key this put
-- created has no TTL yet, and is renewed here.
-- The owner joins the owners set (Len's) as its indexes are renewed: an
-- owner with a live task was added within the window, and only Len takes
-- out an owner, whose exp index is gone. The set is renewed with the
-- agent's registration, well within its TTL while the agent's tasks are
-- put, and when a put adds an owner (which may make the set anew).
local renewOwners = ARGV[13] == '1'
if redis.call('PTTL', final and finIdx or expIdx) < ttlN - windowMs then
  redis.call('PEXPIRE', allIdx, ttl)
  redis.call('PEXPIRE', expIdx, ttl)
  redis.call('PEXPIRE', finIdx, ttl)
  if redis.call('SADD', owners, owner) == 1 then renewOwners = true end
end
if renewOwners then redis.call('PEXPIRE', owners, ttl) end
if ARGV[13] == '1' then
  if KEYS[6] then
    redis.call('SADD', KEYS[6], agent)
    redis.call('PEXPIRE', KEYS[6], ttl)
  end
end
if ctx ~= '' and not ctxSet then
  local ck = ctxPrefix .. ctx
  local c = ctxHeld
  if ctx ~= putCtx then c = redis.call('GET', ck) end
  local cexp, cowner
  if c then cexp, cowner = string.match(c, '^(%d+)|(.*)$') end
  if cexp and tonumber(cexp) > nowN then
    if expN > tonumber(cexp) then redis.call('SET', ck, exp .. '|' .. cowner, 'PX', ttl) end
  else
    redis.call('SET', ck, exp .. '|' .. owner, 'PX', ttl)
  end
end
if ARGV[14] then
  redis.call('SET', KEYS[4], ARGV[14], 'PX', ARGV[15])
  if owner ~= '' then keepRecord(KEYS[5], KEYS[4], ARGV[16], now, maxPerOwner, ARGV[15]) end
end
return 1
`)

// listScript implements Redis.List. It returns {total, more, id, task,
// ...} where each task is a flat HGETALL reply and more is 1 when a
// further page exists, or {-1, n} when a state filter would check the
// hashes of n tasks, more than the bound.
//
//	KEYS: bucket
//	ARGV: taskPrefix, owner, now, context filter, state filter, max score,
//	      cursor score ("" on the first page), cursor id, page size, bound,
//	      "1" when the state filter also keeps the tasks not in a final state
//
// A context filter reads the context's index alone; a state filter is
// checked on each task's hash, of the context's tasks or else the owner's,
// at most bound of them (an owner's share): Redis serves every replica
// from one thread, and the tasks of authentication off are one owner
// with no share. UpdatedAfter is the max score.
var listScript = redis.NewScript(luaCommon + `
local bucket = KEYS[1]
local taskPrefix, owner, now, ctxFilter, stateFilter, maxScore = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]
local cursorScore, cursorID, size, bound = ARGV[7], ARGV[8], tonumber(ARGV[9]), tonumber(ARGV[10])
local orUnfinished = ARGV[11] == '1'

purge(bucket, taskPrefix, owner, now)

local index = bucket .. ':all'
if ctxFilter ~= '' then index = bucket .. ':c:' .. ctxFilter end
local n = redis.call('ZCOUNT', index, '-inf', maxScore)
if stateFilter ~= '' and n > bound then return {-1, n} end

-- A context's index may keep a task whose hash Redis reclaimed, or that
-- another owner or context took over, before the owner's purge read it:
-- it is dropped when met, counted as removed from the batch read.
local checked, removed = ctxFilter ~= '' or stateFilter ~= '', 0
local function keep(id)
  if not checked then return true end
  -- A key of another type is no task of the owner's (pcall: it must not
  -- fail the owner's every list).
  local h = redis.pcall('HMGET', taskPrefix .. id, 'owner', 'ctx', 'state')
  if h.err or h[1] ~= owner or (ctxFilter ~= '' and h[2] ~= ctxFilter) then
    if ctxFilter ~= '' then
      redis.call('ZREM', index, id)
      removed = removed + 1
    end
    return false
  end
  return stateFilter == '' or h[3] == stateFilter or (orUnfinished and not finalState(h[3]))
end

local total = n
if stateFilter ~= '' then
  total = 0
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', index, '-inf', maxScore)) do
    if keep(id) then total = total + 1 end
  end
end
local stale = removed

local min, cursorNum = '-inf', nil
if cursorScore ~= '' then min, cursorNum = cursorScore, tonumber(cursorScore) end
local ids, offset, chunk = {}, 0, 2 * size + 16
while #ids <= size do
  removed = 0
  local batch = redis.call('ZRANGEBYSCORE', index, min, maxScore, 'WITHSCORES', 'LIMIT', offset, chunk)
  for i = 1, #batch, 2 do
    local id = batch[i]
    local seen = cursorNum ~= nil and tonumber(batch[i + 1]) == cursorNum and not bytesLess(cursorID, id)
    if not seen and keep(id) then
      ids[#ids + 1] = id
      if #ids > size then break end
    end
  end
  stale = stale + removed
  if #batch < 2 * chunk then break end
  offset = offset + chunk - removed
end
if stateFilter == '' then total = n - stale end

local out = {total, 0}
if #ids > size then
  out[2] = 1
  ids[#ids] = nil
end
for _, id in ipairs(ids) do
  out[#out + 1] = id
  local fields = redis.pcall('HGETALL', taskPrefix .. id)
  if fields.err then fields = {} end -- another type: shown as a reclaimed task, not at all
  out[#out + 1] = fields
end
return out
`)

// pruneOwnersScript takes out of the owners set (Len's) the owners given
// whose exp index is gone: their tasks all left or expired, and a put
// that makes the index again adds its owner back (putScript). An index
// still there keeps its owner, whatever Len counted in it.
//
//	KEYS: the owners set, then each owner's exp index
//	ARGV: the owners, in KEYS' order
var pruneOwnersScript = redis.NewScript(`
for i, owner in ipairs(ARGV) do
  if redis.call('EXISTS', KEYS[i + 1]) == 0 then redis.call('SREM', KEYS[1], owner) end
end
return 1
`)

// admitScript implements Redis.Admit and, with the claim, Redis.ClaimSend:
// the admission and the claim in one script, so that a claim is made only
// for a send admitted, in one round trip, with nothing to take back.
//
//	KEYS: the owner's exp index, its fin index, the context's key, the
//	      send's record, the owner's record index (the exp index in place
//	      of an absent one; all in the agent's slot)
//	ARGV: now, the oldest put of a final task still live, the owner's
//	      share (0: unbounded), "1" when a context is named, "1" to claim,
//	      then for a claim: the caller's now, the record, its TTL (ms),
//	      the send's key
//
// It returns {verdict, the record found or "", 1 when the context is live,
// its owner}. Verdict 2: the owner's share is full of tasks that are not
// final (nothing claimed); 0: a live record holds the key; 1: admitted
// and, when asked, claimed. A record that expired by the caller's now, or
// one of a send not accepted, is claimed over and returned as found.
var admitScript = newLuaScript(luaRecord + `
local now, limit = ARGV[1], tonumber(ARGV[3])
if limit > 0 and redis.call('ZCOUNT', KEYS[2], '(' .. ARGV[2], '+inf') == 0 and
   redis.call('ZCOUNT', KEYS[1], '(' .. now, '+inf') >= limit then
  return {2, '', 0, ''}
end
local live, owner = 0, ''
if ARGV[4] == '1' then
  local c = redis.call('GET', KEYS[3])
  if c then
    local e, o = string.match(c, '^(%d+)|(.*)$')
    -- A value no replica wrote is not a free context (Put refuses it too).
    if not e then return redis.error_reply('corrupt value at ' .. KEYS[3]) end
    if tonumber(e) > tonumber(now) then live, owner = 1, o end
  end
end
if ARGV[5] ~= '1' then return {1, '', live, owner} end
local claimed, v = claimRecord(KEYS[4], ARGV[7], ARGV[8], ARGV[6])
if not claimed then return {0, v, live, owner} end
keepRecord(KEYS[5], KEYS[4], ARGV[9], now, limit, ARGV[8])
return {1, v, live, owner}
`)

// Verdicts of admitScript.
const (
	admitHeld    = 0
	admitClaimed = 1
	admitQuota   = 2
)
