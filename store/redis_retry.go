package store

import (
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
// the keys Admit reads, so that the claim is made by Admit's script, on a
// cluster too:
//
//	<prefix>{<agent>}r:<owner>:<key>   string: "<expires µs>|<record JSON>"
func (k redisKeys) sendKey(key SendKey) string {
	return k.agentSlot(key.Agent) + "r:" + lengthPrefixed(key.Owner) + ":" + key.Key
}

func encodeSend(rec SendRecord) (string, error) {
	b, err := json.Marshal(rec)
	if err != nil {
		return "", fmt.Errorf("encode send record: %w", err)
	}
	return micros(rec.Expires) + "|" + string(b), nil
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
	val, err := encodeSend(rec)
	if err != nil {
		return "", SendRecord{}, false, err
	}
	owner, prev, claimed, err := r.admit(ctx, a, r.keys.sendKey(key), []any{micros(now), val, r.physicalSendTTL(rec.Expires)})
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

// SaveSend implements Retries. The record is written by sendSaves, with
// those of the sends saving meanwhile.
func (r *Redis) SaveSend(ctx context.Context, key SendKey, rec SendRecord) error {
	val, err := encodeSend(rec)
	if err != nil {
		return err
	}
	ttl := time.Duration(r.physicalSendTTL(rec.Expires)) * time.Millisecond
	if err := r.saves.save(ctx, r.keys.sendKey(key), val, ttl); err != nil {
		return unavailable("save send", err)
	}
	return nil
}

// LoadSend implements Retries.
func (r *Redis) LoadSend(ctx context.Context, key SendKey, now time.Time) (SendRecord, error) {
	v, err := r.client.Get(ctx, r.keys.sendKey(key)).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return SendRecord{}, ErrNotFound
	case err != nil:
		return SendRecord{}, unavailable("load send", err)
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
