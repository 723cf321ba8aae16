package store

import (
	"context"
	"encoding/hex"
	"hash/maphash"
	"slices"
	"strings"
	"sync"
	"time"
	"unique"

	"github.com/google/btree"
)

// memSends holds a Memory's send records, bounded by its MaxTasks and, per
// principal and agent, by its MaxTasksPerOwner, as tasks are: a principal
// at its share loses its own record written least recently, so that one
// caller's many keys cannot push another's out (and have its retry sent to
// the backend again); a full index loses the record written least recently.
type memSends struct {
	mu sync.Mutex
	// order holds the records most recently written first (putLess says
	// why not least).
	order  *btree.BTreeG[*memSend]
	shares map[unique.Handle[memSendOwner]]*memSendShare
	writes uint64
	// seeds are the keys' sums' (memSendKey), set by NewMemory.
	seeds [2]maphash.Seed
}

// memSendShare is one principal's records in one agent. They are mapped by
// their keys' sums alone: a map of every record keyed by principal and sum
// would hold the principal's handle once more in every slot.
type memSendShare struct {
	byKey map[[2]uint64]*memSend
	// order holds the records most recently written first, for a principal
	// with a share (authentication on); nil for owner "".
	order *btree.BTreeG[*memSend]
}

// memSendOwner is the principal and agent a share of records is counted by.
type memSendOwner struct {
	agent, owner string
}

// memSendKey is a SendKey with its agent and owner interned as one pair: a
// few shared by every record, a single handle in each. The caller's key is
// kept as its sum, inside the record: a string of its own would be another
// allocation per record, about as large as the key. The principal stays
// exact, so two keys can only meet under one principal, by a collision of
// the sum, which is of the process's own random seeds: a caller could at
// most make one of its own sends look like a retry of another of its own.
type memSendKey struct {
	share unique.Handle[memSendOwner]
	sum   [2]uint64
}

// sendKeyOf is k as s keeps it.
func (s *memSends) sendKeyOf(k SendKey) memSendKey {
	return memSendKey{share: unique.Make(memSendOwner{agent: k.Agent, owner: k.Owner}),
		sum: [2]uint64{maphash.String(s.seeds[0], k.Key), maphash.String(s.seeds[1], k.Key)}}
}

// memSend is a SendRecord as kept. Every record has a digest, a state and a
// window, most a task id; a retry needs nothing else of them. What only some
// carry (a kept answer, a running send's claim, a digest not of the
// gateway's form) is kept apart.
type memSend struct {
	key     memSendKey
	written uint64 // the number of its last write, for order
	state   unique.Handle[string]
	// digest is Digest decoded, unless rare.digest holds it.
	digest [digestSize]byte
	taskID string
	// expires is Expires in nanoseconds since the Unix epoch, unless
	// rare.expires holds it: an instant, as Redis keeps it too.
	expires int64
	rare    *memSendRare
}

type memSendRare struct {
	// digest is a Digest not of the hex form, when notHex.
	notHex        bool
	digest        string
	answer        []byte
	answerDialect string
	holder        string
	lease         time.Time
	// expires is an Expires that nanoseconds since the Unix epoch cannot
	// hold (the zero time, say), when notUnix.
	notUnix bool
	expires time.Time
}

// unixNanos returns t in nanoseconds since the Unix epoch, and whether
// they give t's instant back.
func unixNanos(t time.Time) (int64, bool) {
	ns := t.UnixNano()
	return ns, time.Unix(0, ns).Equal(t)
}

// expired reports whether ms's window has ended by now.
func (ms *memSend) expired(now time.Time) bool {
	if ms.rare != nil && ms.rare.notUnix {
		return !ms.rare.expires.After(now)
	}
	ns, ok := unixNanos(now)
	if !ok {
		return !time.Unix(0, ms.expires).After(now)
	}
	return ms.expires <= ns
}

func writtenLess(a, b *memSend) bool { return a.written > b.written }

// digestSize is the bytes of the gateway's digests
// (normalize.AppendSendDigest), a 64-bit hash.
const digestSize = 8

// hexDigest decodes a digest of the gateway's form: digestSize bytes in
// lowercase hex.
func hexDigest(s string) (sum [digestSize]byte, ok bool) {
	var text [2 * digestSize]byte
	if len(s) != len(text) {
		return sum, false
	}
	copy(text[:], s)
	if _, err := hex.Decode(sum[:], text[:]); err != nil {
		return sum, false
	}
	hex.Encode(text[:], sum[:])
	return sum, string(text[:]) == s // not uppercase
}

func (ms *memSend) record() SendRecord {
	rec := SendRecord{State: ms.state.Value(), TaskID: ms.taskID, Expires: time.Unix(0, ms.expires).UTC()}
	if r := ms.rare; r != nil {
		rec.Digest, rec.Answer, rec.AnswerDialect, rec.Holder, rec.Lease = r.digest, r.answer, r.answerDialect, r.holder, r.lease
		if r.notUnix {
			rec.Expires = r.expires
		}
	}
	if ms.rare == nil || !ms.rare.notHex {
		rec.Digest = hex.EncodeToString(ms.digest[:])
	}
	return rec
}

// set keeps rec in ms. taskID is rec.TaskID as the record keeps it.
func (ms *memSend) set(rec SendRecord, taskID string) {
	expires, isUnix := unixNanos(rec.Expires)
	ms.state, ms.taskID, ms.expires, ms.rare = unique.Make(rec.State), taskID, expires, nil
	sum, isHex := hexDigest(rec.Digest)
	ms.digest = sum
	if isHex && isUnix && rec.Answer == nil && rec.AnswerDialect == "" && rec.Holder == "" && rec.Lease.IsZero() {
		return
	}
	// The answer may be a view into a buffer the caller reuses.
	ms.rare = &memSendRare{answer: slices.Clone(rec.Answer), answerDialect: rec.AnswerDialect, holder: rec.Holder, lease: rec.Lease}
	if !isHex {
		ms.rare.notHex, ms.rare.digest = true, rec.Digest
	}
	if !isUnix {
		ms.rare.notUnix, ms.rare.expires = true, rec.Expires
	}
}

func (m *Memory) isClosed() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.closed
}

// keptTaskID is the task id a record keeps: the index's own string when
// it holds the task (as it does once a send's task is recorded), else a
// copy, as the caller's may be a view into a buffer it reuses.
func (m *Memory) keptTaskID(agent, taskID string) string {
	if taskID == "" {
		return ""
	}
	m.mu.Lock()
	mt := m.lookup(agent, taskID)
	m.mu.Unlock()
	if mt != nil {
		return mt.id()
	}
	return strings.Clone(taskID)
}

// ClaimSend implements Retries.
func (m *Memory) ClaimSend(ctx context.Context, a Admission, key SendKey, rec SendRecord, now time.Time) (string, SendRecord, bool, error) {
	if key.Key == "" {
		return "", SendRecord{}, false, errNoClaim
	}
	owner, err := m.Admit(ctx, a)
	if err != nil && err != ErrNotFound {
		return "", SendRecord{}, false, err
	}
	prior, claimed := m.claim(key, rec, now)
	return owner, prior, claimed, err
}

// GetClaimSend implements Retries.
func (m *Memory) GetClaimSend(ctx context.Context, agent, id string, key SendKey, rec SendRecord, now time.Time) (Task, SendRecord, bool, error) {
	if key.Key == "" {
		return Task{}, SendRecord{}, false, errNoClaim
	}
	t, err := m.Get(ctx, agent, id)
	if err != nil && err != ErrNotFound {
		return Task{}, SendRecord{}, false, err
	}
	prior, claimed := m.claim(key, rec, now)
	return t, prior, claimed, err
}

// claim writes rec as key's record unless a live record other than a
// not-accepted one is there, which it returns instead.
func (m *Memory) claim(key SendKey, rec SendRecord, now time.Time) (SendRecord, bool) {
	taskID := m.keptTaskID(key.Agent, rec.TaskID)
	s := &m.sends
	s.mu.Lock()
	defer s.mu.Unlock()
	k := s.sendKeyOf(key)
	prior, ok := s.get(k, now)
	if ok && prior.State != SendNotAccepted {
		return prior, false
	}
	s.put(k, rec, taskID, m.maxTasks, m.maxPerOwner)
	return prior, true
}

// SaveSend implements Retries.
func (m *Memory) SaveSend(_ context.Context, key SendKey, rec SendRecord) error {
	if m.isClosed() {
		return unavailable("save send", errClosed)
	}
	taskID := m.keptTaskID(key.Agent, rec.TaskID)
	s := &m.sends
	s.mu.Lock()
	defer s.mu.Unlock()
	s.put(s.sendKeyOf(key), rec, taskID, m.maxTasks, m.maxPerOwner)
	return nil
}

// PutSend implements Retries.
func (m *Memory) PutSend(ctx context.Context, t Task, key SendKey, rec SendRecord) error {
	if err := checkPutSend(t, key); err != nil {
		return err
	}
	if err := m.Put(ctx, t); err != nil {
		return err
	}
	return m.SaveSend(ctx, key, rec)
}

// LoadSend implements Retries.
func (m *Memory) LoadSend(_ context.Context, key SendKey, now time.Time) (SendRecord, error) {
	if m.isClosed() {
		return SendRecord{}, unavailable("load send", errClosed)
	}
	s := &m.sends
	s.mu.Lock()
	defer s.mu.Unlock()
	if rec, ok := s.get(s.sendKeyOf(key), now); ok {
		return rec, nil
	}
	return SendRecord{}, ErrNotFound
}

// get returns key's record when it has not expired by now. The caller
// holds s.mu.
func (s *memSends) get(key memSendKey, now time.Time) (SendRecord, bool) {
	sh := s.shares[key.share]
	if sh == nil {
		return SendRecord{}, false
	}
	ms := sh.byKey[key.sum]
	if ms == nil {
		return SendRecord{}, false
	}
	if ms.expired(now) {
		s.remove(ms)
		return SendRecord{}, false
	}
	return ms.record(), true
}

// remove forgets ms. The caller holds s.mu.
func (s *memSends) remove(ms *memSend) {
	s.order.Delete(ms)
	sh := s.shares[ms.key.share]
	delete(sh.byKey, ms.key.sum)
	if sh.order != nil {
		sh.order.Delete(ms)
	}
	if len(sh.byKey) == 0 {
		delete(s.shares, ms.key.share)
	}
}

// put writes key's record, making room within limit and, for a principal
// (authentication on), within perOwner of its own. The caller holds s.mu.
func (s *memSends) put(key memSendKey, rec SendRecord, taskID string, limit, perOwner int) {
	if s.shares == nil {
		s.order = btree.NewG(btreeDegree, writtenLess)
		s.shares = map[unique.Handle[memSendOwner]]*memSendShare{}
	}
	s.writes++
	var ms *memSend
	sh := s.shares[key.share]
	if sh != nil {
		ms = sh.byKey[key.sum]
	}
	if ms != nil {
		// Reordered in place: its share, maybe of it alone, stays.
		s.order.Delete(ms)
		if sh.order != nil {
			sh.order.Delete(ms)
		}
	} else {
		for sh != nil && sh.order != nil && sh.order.Len() >= perOwner {
			oldest, _ := sh.order.Max()
			s.remove(oldest)
		}
		for s.order.Len() >= limit {
			oldest, _ := s.order.Max()
			s.remove(oldest)
		}
		// Making room may have taken the share's last record, and the
		// share with it.
		sh = s.shares[key.share]
		if sh == nil {
			sh = &memSendShare{byKey: map[[2]uint64]*memSend{}}
			if key.share.Value().owner != "" {
				sh.order = btree.NewG(btreeDegree, writtenLess)
			}
			s.shares[key.share] = sh
		}
		ms = &memSend{key: key}
		sh.byKey[key.sum] = ms
	}
	ms.written = s.writes
	ms.set(rec, taskID)
	s.order.ReplaceOrInsert(ms)
	if sh.order != nil {
		sh.order.ReplaceOrInsert(ms)
	}
}
