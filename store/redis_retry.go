package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// sendKey is the Redis key of a send record, in its agent's hash slot like
// the keys Admit reads and Put writes, so that the claim is made by Admit's
// script and the outcome by Put's (PutSend), on a cluster too. It has the
// first layout's form (redisKeys says why):
//
//	<prefix>{<agent>}r:<owner>:<key>   string: "<expires µs>|<record JSON>"
//
// The key's last part is the caller's key as is: the record index of the
// owner (agentKeys.sends) holds it, and the scripts derive the record's key
// from it.
func (k redisKeys) sendKey(key SendKey) string {
	return k.prefix + agentTag(key.Agent) + "r:" + lengthPrefixed(key.Owner) + ":" + key.Key
}

// claimSendScript writes ARGV[2] unless a record that expires after ARGV[1]
// and is not a not-accepted one is there. It returns {claimed, the record
// found or ""}. Expiry is the caller's clock, as for tasks; the key's Redis
// TTL only reclaims memory. The state is found in the record's JSON, where
// a quote inside an id is always escaped.
//
//	KEYS: the record, the owner's record index
//	ARGV: the caller's now, the record, its TTL (ms), the send's key, the
//	      store's now, the owner's share (0: unbounded)
var claimSendScript = newLuaScript(luaRecord + `
local claimed, v = claimRecord(KEYS[1], ARGV[2], ARGV[3], ARGV[1])
if not claimed then return {0, v} end
keepRecord(KEYS[2], KEYS[1], ARGV[4], ARGV[5], ARGV[6], ARGV[3])
return {1, v}
`)

// countSendScript counts a record SaveSend wrote in its owner's index,
// for the one that made it new there (rare: a send's record is new when
// claimed).
//
//	KEYS: the owner's record index, the record
//	ARGV: the send's key, the owner's share, the record's TTL (ms)
var countSendScript = redis.NewScript(luaRecord + `
countRecord(KEYS[1], redis.call('ZCARD', KEYS[1]), KEYS[2], ARGV[1], tonumber(ARGV[2]), ARGV[3])
return 1
`)

// sendShare is the bound of key's owner's records, 0 for the one principal
// of a gateway without authentication, bounded by no share.
func (r *Redis) sendShare(key SendKey) int {
	if key.Owner == "" {
		return 0
	}
	return r.maxPerOwner
}

// sendWire is a send record as stored: SendRecord's JSON, the same bytes,
// with its times' JSON written beforehand into times, for time.Time's
// MarshalJSON allocates its text each time. The wire of a script's record
// is part of its call's allocation (admitCall, putCall, claimCall), with
// the buffer of its stored form.
type sendWire struct {
	// SendRecord's own fields, but for its times: json takes the fields
	// of the same names below, which are shallower.
	SendRecord
	Lease   wireTime `json:"l,omitempty"`
	Expires wireTime `json:"e"`

	times [2 * len(`"2006-01-02T15:04:05.999999999-07:00"`)]byte
	val   [256]byte
	out   bytes.Buffer
}

// encode returns rec's stored form, "<expires µs>|<JSON>", in w's buffer
// when it fits.
func (w *sendWire) encode(rec SendRecord) ([]byte, error) {
	*w = sendWire{SendRecord: rec}
	times, err := rec.Expires.AppendText(w.times[:0])
	if err != nil {
		return nil, fmt.Errorf("encode send record: %w", err)
	}
	w.Expires = times
	if !rec.Lease.IsZero() { // SendRecord's omitzero
		lease, err := rec.Lease.AppendText(times[len(times):])
		if err != nil {
			return nil, fmt.Errorf("encode send record: %w", err)
		}
		w.Lease = lease
	}
	// An Encoder writes the JSON into out as it is made, where Marshal
	// copies it out for its caller.
	w.out = *bytes.NewBuffer(append(strconv.AppendInt(w.val[:0], rec.Expires.UnixMicro(), 10), '|'))
	if err := json.NewEncoder(&w.out).Encode(w); err != nil {
		return nil, fmt.Errorf("encode send record: %w", err)
	}
	v := w.out.Bytes()
	return v[:len(v)-1], nil // without Encode's newline
}

// wireTime is a time's RFC 3339 text with the nanoseconds (AppendText),
// which json writes as a string, as time.Time's MarshalJSON writes it. It
// is a TextMarshaler rather than a Marshaler: json only escapes a text,
// where it would run its scanner over a Marshaler's JSON. The receiver is
// a pointer, so that json calls it without boxing a copy.
type wireTime []byte

func (t *wireTime) MarshalText() ([]byte, error) { return *t, nil }

// wireBytes is a script's argument of bytes, passed by pointer and written
// by go-redis as the bytes (encoding.BinaryMarshaler): a []byte boxed in
// an interface would be an allocation of its own.
type wireBytes []byte

func (b *wireBytes) MarshalBinary() ([]byte, error) { return *b, nil }

func encodeSend(rec SendRecord) (string, error) {
	var w sendWire
	b, err := w.encode(rec)
	return string(b), err
}

func decodeSend(v string) (SendRecord, time.Time, error) {
	e, body, ok := strings.Cut(v, "|")
	us, err := strconv.ParseInt(e, 10, 64)
	if !ok || err != nil {
		return SendRecord{}, time.Time{}, unavailable("decode send record", errors.New("malformed value"))
	}
	var rec SendRecord
	if err := json.Unmarshal([]byte(body), &rec); err != nil {
		return SendRecord{}, time.Time{}, unavailable("decode send record", err)
	}
	return rec, fromMicros(us), nil
}

// physicalSendTTL is the Redis TTL of a record expiring at expires.
func (r *Redis) physicalSendTTL(expires time.Time) int64 {
	return max(expires.Sub(r.now())+redisTTLGrace, time.Millisecond).Milliseconds()
}

// ClaimSend implements Retries. The claim is made by Admit's script, in
// the same round trip and only when the admission succeeds.
func (r *Redis) ClaimSend(ctx context.Context, a Admission, key SendKey, rec SendRecord, now time.Time) (string, SendRecord, bool, error) {
	if key.Key == "" {
		return "", SendRecord{}, false, errNoClaim
	}
	owner, prev, claimed, err := r.admit(ctx, a, &key, &rec, now)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return "", SendRecord{}, false, err
	}
	var prior SendRecord
	if prev != "" {
		var derr error
		if prior, _, derr = decodeSend(prev); derr != nil {
			return "", SendRecord{}, false, derr
		}
	}
	return owner, prior, claimed, err
}

// GetClaimSend implements Retries: the task's read and the claim in one
// pipeline.
func (r *Redis) GetClaimSend(ctx context.Context, agent, id string, key SendKey, rec SendRecord, now time.Time) (Task, SendRecord, bool, error) {
	var fields *redis.MapStringStringCmd
	prior, claimed, err := r.claimWith(ctx, key, rec, now, func(p redis.Pipeliner) { fields = p.HGetAll(ctx, r.keys.task(agent, id)) })
	if err != nil {
		return Task{}, SendRecord{}, false, err
	}
	if len(fields.Val()) == 0 {
		return Task{}, prior, claimed, ErrNotFound
	}
	t, expires, err := decodeTask(agent, id, fields.Val())
	switch {
	case err != nil:
		return Task{}, SendRecord{}, false, err
	case expires <= r.now().UnixMicro():
		return Task{}, prior, claimed, ErrNotFound
	}
	return t, prior, claimed, nil
}

// claimWith runs the claim of key in one pipeline after the commands
// queue adds, and decodes its reply.
func (r *Redis) claimWith(ctx context.Context, key SendKey, rec SendRecord, now time.Time, queue func(p redis.Pipeliner)) (SendRecord, bool, error) {
	if key.Key == "" {
		return SendRecord{}, false, errNoClaim
	}
	c := &claimCall{now: now.UnixMicro(), storeNow: r.now().UnixMicro(), recTTL: r.physicalSendTTL(rec.Expires), member: key.Key}
	var err error
	if c.rec, err = c.wire.encode(rec); err != nil {
		return SendRecord{}, false, err
	}
	c.keys = r.keys.sendKeys(key)
	var share any = 0
	if r.sendShare(key) != 0 {
		share = r.shareArg
	}
	args := append(scriptArgs(c.args[:], c.keys[:]), &c.now, &c.rec, &c.recTTL, &c.member, &c.storeNow, share)
	run := func(claim *redis.Cmd) error {
		_, err := r.client.Pipelined(ctx, func(p redis.Pipeliner) error {
			queue(p)
			_ = p.Process(ctx, claim)
			return nil
		})
		return err
	}
	claim := claimSendScript.evalSha(ctx, args)
	err = run(claim)
	if err != nil && isNoScript(claim.Err()) {
		// A Redis that restarted or flushed its scripts: once, in full.
		claim = claimSendScript.eval(ctx, args)
		err = run(claim)
	}
	if err != nil {
		return SendRecord{}, false, unavailable("claim send", err)
	}
	reply, err := claim.Slice()
	if err != nil || len(reply) != 2 {
		return SendRecord{}, false, unavailable("claim send", fmt.Errorf("unexpected reply %v: %w", reply, err))
	}
	flag, _ := reply[0].(int64)
	prev, _ := reply[1].(string)
	var prior SendRecord
	if prev != "" {
		if prior, _, err = decodeSend(prev); err != nil {
			return SendRecord{}, false, err
		}
	}
	return prior, flag == 1, nil
}

// SaveSend implements Retries. The record is written by sendSaves, with
// those of the sends saving meanwhile.
func (r *Redis) SaveSend(ctx context.Context, key SendKey, rec SendRecord) error {
	q := &queuedSave{ttl: r.physicalSendTTL(rec.Expires), member: key.Key, score: float64(r.now().UnixMicro()), share: r.sendShare(key)}
	var err error
	if q.val, err = q.wire.encode(rec); err != nil {
		return err
	}
	keys := r.keys.sendKeys(key)
	q.key, q.index = keys[0], keys[1]
	q.args()
	if err := r.saves.save(ctx, q); err != nil {
		return unavailable("save send", err)
	}
	return nil
}

// PutSend implements Retries: the record is written by Put's script, in
// the task's round trip (its key is in the agent's slot).
func (r *Redis) PutSend(ctx context.Context, t Task, key SendKey, rec SendRecord) error {
	if err := checkPutSend(t, key); err != nil {
		return err
	}
	return r.put(ctx, t, &key, &rec)
}

// LoadSend implements Retries.
func (r *Redis) LoadSend(ctx context.Context, key SendKey, now time.Time) (SendRecord, error) {
	v, err := r.client.Get(ctx, r.keys.sendKey(key)).Result()
	if err != nil {
		return SendRecord{}, readErr("load send", err)
	}
	rec, expires, err := decodeSend(v)
	if err != nil {
		return SendRecord{}, err
	}
	if !expires.After(now) {
		return SendRecord{}, ErrNotFound
	}
	return rec, nil
}
