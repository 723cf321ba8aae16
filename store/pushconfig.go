package store

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"
)

// PushConfig is a caller's push notification config, as the gateway keeps
// it: the backend never sees it (it holds the task's PushRelay instead).
type PushConfig struct {
	Agent  string `json:"agent"`
	TaskID string `json:"taskId"`
	// ID is the config id in the caller's dialect; unique per task.
	ID string `json:"id"`
	// Owner is the principal that set the config (the task's owner).
	Owner string `json:"owner"`
	// Dialect is the caller's dialect, "0.x" or "1.0" (dialect.ID.String).
	Dialect string `json:"dialect"`
	URL     string `json:"url"`
	Token   string `json:"token,omitempty"`
	// AuthSchemes and AuthCredentials are the caller's authentication
	// (1.0 has one scheme, 0.x a list).
	AuthSchemes     []string `json:"authSchemes,omitempty"`
	AuthCredentials string   `json:"authCredentials,omitempty"`
	// Authentication is the caller's authentication object as it sent it,
	// for reading back unchanged.
	Authentication json.RawMessage `json:"authentication,omitempty"`
	// Created orders a task's configs in List.
	Created time.Time `json:"created"`
}

// PushRelay is the push config the gateway gives a task's backend: one per
// task, whatever number of caller configs it fans out to.
type PushRelay struct {
	// ID is the unguessable last segment of the relay's URL.
	ID string `json:"id"`
	// Token is what the backend must present with every delivery.
	Token string `json:"token"`
	Agent string `json:"agent"`
	// TaskID is "" while the relay was given in a send that had not yet
	// created its task; Pending is then the caller's config.
	TaskID  string      `json:"taskId,omitempty"`
	Pending *PushConfig `json:"pending,omitempty"`
	// Backend is, while Pending, the backend the send went to: the one a
	// delivery that comes before the send's answer records the task under.
	Backend string `json:"backend,omitempty"`
}

// PushStore keeps push configs and relays next to the task index, with the
// index's time to live, renewed on every write. Implementations are safe for
// concurrent use; failures to reach the backing service wrap ErrUnavailable.
type PushStore interface {
	// PutPushConfig stores c under its task, replacing the config of the
	// same ID, and returns the task's relay: relay when the task had none
	// (it is then recorded, findable by PushRelay), else the one it has.
	// A relay with Pending set is bound to c's task: when it is bound to
	// another already, nothing is written and the error is ErrRelayBound.
	PutPushConfig(ctx context.Context, c PushConfig, relay PushRelay) (PushRelay, error)
	// PushConfigs returns a task's configs, oldest first, and its relay
	// (zero when it has none).
	PushConfigs(ctx context.Context, agent, taskID string) ([]PushConfig, PushRelay, error)
	// DeletePushConfig removes one config, or returns ErrNotFound. When it
	// was the task's last, the relay is removed too and returned, so that
	// the caller removes the backend's config; else the zero PushRelay.
	DeletePushConfig(ctx context.Context, agent, taskID, id string) (PushRelay, error)
	// PutPendingRelay records a relay given in a send before its task
	// exists (TaskID "", Pending set), for the deliveries that come before
	// the send's answer.
	PutPendingRelay(ctx context.Context, relay PushRelay) error
	// DeleteRelay forgets a relay by id (a pending one once it is bound).
	DeleteRelay(ctx context.Context, relayID string) error
	// PushRelay finds a relay by its id, or returns ErrNotFound.
	PushRelay(ctx context.Context, relayID string) (PushRelay, error)
	// PutPushSnapshot keeps the last task the relay saw (1.0 JSON), which
	// later status and artifact updates fold into for 0.x callers.
	PutPushSnapshot(ctx context.Context, agent, taskID string, task []byte) error
	// PushSnapshot returns it, or ErrNotFound.
	PushSnapshot(ctx context.Context, agent, taskID string) ([]byte, error)
}

var (
	_ PushStore = (*Memory)(nil)
	_ PushStore = (*Redis)(nil)
)

func validatePushConfig(c PushConfig, r PushRelay) error {
	var problems []error
	if c.Agent == "" || c.TaskID == "" || c.ID == "" || c.URL == "" {
		problems = append(problems, errors.New("push config needs an agent, a task id, an id and a url"))
	}
	if r.ID == "" || r.Token == "" {
		problems = append(problems, errors.New("push relay needs an id and a token"))
	}
	return errors.Join(problems...)
}

// sortPushConfigs puts configs in List order: oldest first, ties by id.
func sortPushConfigs(configs []PushConfig) {
	slices.SortFunc(configs, func(a, b PushConfig) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}
