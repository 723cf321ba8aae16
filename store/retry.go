package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// SendKey names one send for retries: the caller's key (an Idempotency-Key
// header or the message id), scoped by the published agent and the caller's
// principal, so that no caller's key reaches another's send.
type SendKey struct {
	Agent, Owner, Key string
}

// Send states of a SendRecord.
const (
	// SendRunning: the first send is at the backend; Holder's Lease says
	// whether its gateway replica is still alive.
	SendRunning = "running"
	// SendTask: the backend answered with the task TaskID.
	SendTask = "task"
	// SendMessage: the backend answered with the message in Answer.
	SendMessage = "message"
	// SendNotAccepted: the first send failed before the backend took it (a
	// refused connection, a JSON-RPC error): a retry is sent as a first send.
	SendNotAccepted = "not_accepted"
	// SendUnknown: the first send ended without an answer after it reached
	// the backend (a timeout, a cut reply): whether the work started is
	// unknown, so it is never sent again under the same key.
	SendUnknown = "unknown"
	// SendAnswerDropped: the backend answered with a message larger than
	// the agent keeps for retries.
	SendAnswerDropped = "answer_dropped"
)

// SendRecord is what the index keeps of a send for its retries.
type SendRecord struct {
	// Digest identifies the message and configuration the key was first
	// sent with; a retry with another digest reuses the key.
	Digest string `json:"d"`
	State  string `json:"s"`
	// TaskID is the task the send created, once known.
	TaskID string `json:"t,omitempty"`
	// Answer is the backend's direct message answer in AnswerDialect (a
	// gateway dialect name), for SendMessage.
	Answer        []byte `json:"a,omitempty"`
	AnswerDialect string `json:"ad,omitempty"`
	// Holder names the gateway replica running the first send, and Lease
	// when its claim lapses unless renewed.
	Holder string    `json:"h,omitempty"`
	Lease  time.Time `json:"l,omitzero"`
	// Expires ends the retry window: past it, the key is free again.
	Expires time.Time `json:"e"`
}

// Retries keeps the sends retries are matched against. Records are kept
// until their Expires, judged by the now the caller passes.
type Retries interface {
	// ClaimSend admits a send as Admit does and, in the same round trip,
	// claims key for rec, unless a record of key whose Expires is after now
	// exists: then it returns that record and claimed false, and writes
	// nothing. A record in state SendNotAccepted stands for no work: it is
	// claimed over, and returned as prior with claimed true. Admission errors are Admit's; the claim is made only when the
	// admission succeeds (ErrNotFound for the context included).
	ClaimSend(ctx context.Context, a Admission, key SendKey, rec SendRecord, now time.Time) (contextOwner string, prior SendRecord, claimed bool, err error)
	// GetClaimSend returns agent's task id as Get does and, in the same
	// round trip, claims key for rec as ClaimSend does (for a send that
	// continues that task, which admits nothing). The claim is made
	// whatever Get finds: a caller refused the task frees its own claim.
	GetClaimSend(ctx context.Context, agent, id string, key SendKey, rec SendRecord, now time.Time) (task Task, prior SendRecord, claimed bool, err error)
	// SaveSend writes rec as key's record, kept until rec.Expires.
	SaveSend(ctx context.Context, key SendKey, rec SendRecord) error
	// PutSend puts t as Put does and, in the same round trip, writes rec
	// as key's record as SaveSend does: the task a send made and the
	// send's outcome for its retries. rec is written only when t is (not
	// with Put's errors). key is of t's agent.
	PutSend(ctx context.Context, t Task, key SendKey, rec SendRecord) error
	// LoadSend returns key's record, or ErrNotFound once it expired (by now).
	LoadSend(ctx context.Context, key SendKey, now time.Time) (SendRecord, error)
}

// errNoClaim reports a ClaimSend without a key.
var errNoClaim = errors.New("claim send: the key is empty")

// checkPutSend refuses a PutSend whose key is of another agent than its
// task: on Redis the two are written by one script, in the agent's slot.
func checkPutSend(t Task, key SendKey) error {
	if key.Agent != t.Agent {
		return fmt.Errorf("put send: the key's agent %q is not the task's %q", key.Agent, t.Agent)
	}
	return nil
}
