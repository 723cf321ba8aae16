package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/a2agate/gateway/internal/testredis"
)

// The push conformance suite states the PushStore contract once and runs it
// against Memory and Redis.

func TestMemoryPushConformance(t *testing.T) {
	t.Parallel()
	runPushConformance(t, openMemory(MemoryConfig{}))
}

func TestRedisPushConformance(t *testing.T) {
	t.Parallel()
	testredis.Addr(t)
	runPushConformance(t, openRedis)
}

func runPushConformance(t *testing.T, open opener) {
	cases := []struct {
		name string
		run  func(t *testing.T, s PushStore)
	}{
		{"OneRelayPerTask", testPushOneRelayPerTask},
		{"ReplaceAndOrder", testPushReplaceAndOrder},
		{"DeleteLeavesNothing", testPushDeleteLeavesNothing},
		{"TasksDoNotCollide", testPushTasksDoNotCollide},
		{"PendingRelay", testPushPendingRelay},
		{"PendingRelayBindsOnce", testPushPendingRelayBindsOnce},
		{"Snapshot", testPushSnapshot},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := open(t, newFakeClock()).(PushStore) // before Parallel: openers are not safe for concurrent use
			t.Parallel()
			c.run(t, s)
		})
	}
}

func pushConfig(agent, task, id string, created int) PushConfig {
	return PushConfig{Agent: agent, TaskID: task, ID: id, Owner: "iss|alice", Dialect: "1.0", URL: "https://hooks.example/" + id,
		Token: "tok-" + id, AuthSchemes: []string{"Bearer"}, AuthCredentials: "cred", Authentication: []byte(`{"scheme":"Bearer"}`),
		Created: time.Date(2026, 3, 1, 12, 0, created, 0, time.UTC)}
}

func mustPutPush(t *testing.T, s PushStore, c PushConfig, relayID string) PushRelay {
	t.Helper()
	got, err := s.PutPushConfig(context.Background(), c, PushRelay{ID: relayID, Token: "relaytok-" + relayID})
	if err != nil {
		t.Fatalf("PutPushConfig(%s/%s) = %v", c.TaskID, c.ID, err)
	}
	return got
}

func testPushOneRelayPerTask(t *testing.T, s PushStore) {
	ctx := context.Background()
	first := mustPutPush(t, s, pushConfig("a", "t1", "c1", 1), "r1")
	second := mustPutPush(t, s, pushConfig("a", "t1", "c2", 2), "r2")
	if first.ID != "r1" || second.ID != "r1" || second.Token != "relaytok-r1" || second.TaskID != "t1" || second.Agent != "a" {
		t.Fatalf("relays %+v then %+v: want r1 kept for the task", first, second)
	}
	got, err := s.PushRelay(ctx, "r1")
	if err != nil || got.TaskID != "t1" || got.Token != "relaytok-r1" {
		t.Fatalf("PushRelay(r1) = %+v, %v", got, err)
	}
	if _, err := s.PushRelay(ctx, "r2"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("PushRelay(r2) = %v, want ErrNotFound: the losing relay is never recorded", err)
	}
}

func testPushReplaceAndOrder(t *testing.T, s PushStore) {
	ctx := context.Background()
	mustPutPush(t, s, pushConfig("a", "t1", "late", 5), "r1")
	mustPutPush(t, s, pushConfig("a", "t1", "early", 1), "r1")
	replaced := pushConfig("a", "t1", "late", 5)
	replaced.URL = "https://hooks.example/replaced"
	mustPutPush(t, s, replaced, "r1")
	configs, relay, err := s.PushConfigs(ctx, "a", "t1")
	if err != nil || relay.ID != "r1" || len(configs) != 2 {
		t.Fatalf("PushConfigs = %+v, %+v, %v", configs, relay, err)
	}
	if configs[0].ID != "early" || configs[1].ID != "late" || configs[1].URL != "https://hooks.example/replaced" {
		t.Fatalf("configs %+v: want early then the replaced late", configs)
	}
	c := configs[0]
	if c.Token != "tok-early" || c.Owner != "iss|alice" || c.Dialect != "1.0" || c.AuthCredentials != "cred" ||
		len(c.AuthSchemes) != 1 || string(c.Authentication) != `{"scheme":"Bearer"}` {
		t.Fatalf("config read back as %+v", c)
	}
}

func testPushDeleteLeavesNothing(t *testing.T, s PushStore) {
	ctx := context.Background()
	mustPutPush(t, s, pushConfig("a", "t1", "c1", 1), "r1")
	mustPutPush(t, s, pushConfig("a", "t1", "c2", 2), "r1")
	if err := s.PutPushSnapshot(ctx, "a", "t1", []byte(`{"id":"t1"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeletePushConfig(ctx, "a", "t1", "nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("delete of a missing config = %v, want ErrNotFound", err)
	}
	if r, err := s.DeletePushConfig(ctx, "a", "t1", "c1"); err != nil || r.ID != "" {
		t.Fatalf("delete of c1 = %+v, %v: want no relay while c2 remains", r, err)
	}
	r, err := s.DeletePushConfig(ctx, "a", "t1", "c2")
	if err != nil || r.ID != "r1" {
		t.Fatalf("delete of the last config = %+v, %v: want relay r1 back", r, err)
	}
	if configs, relay, err := s.PushConfigs(ctx, "a", "t1"); err != nil || len(configs) != 0 || relay.ID != "" {
		t.Fatalf("after delete: %+v, %+v, %v", configs, relay, err)
	}
	if _, err := s.PushRelay(ctx, "r1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("relay after delete: %v", err)
	}
	if _, err := s.PushSnapshot(ctx, "a", "t1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("snapshot after delete: %v", err)
	}
	if _, err := s.DeletePushConfig(ctx, "a", "t1", "c2"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second delete = %v, want ErrNotFound", err)
	}
}

func testPushTasksDoNotCollide(t *testing.T, s PushStore) {
	ctx := context.Background()
	mustPutPush(t, s, pushConfig("a", "t1", "c", 1), "r1")
	mustPutPush(t, s, pushConfig("b", "t1", "c", 1), "r2")
	mustPutPush(t, s, pushConfig("a:t", "1", "c", 1), "r3")
	for _, k := range []struct{ agent, task, relay string }{{"a", "t1", "r1"}, {"b", "t1", "r2"}, {"a:t", "1", "r3"}} {
		configs, relay, err := s.PushConfigs(ctx, k.agent, k.task)
		if err != nil || len(configs) != 1 || relay.ID != k.relay {
			t.Fatalf("%s/%s: %+v, %+v, %v", k.agent, k.task, configs, relay, err)
		}
	}
}

func testPushPendingRelay(t *testing.T, s PushStore) {
	ctx := context.Background()
	pending := pushConfig("a", "", "c1", 1)
	if err := s.PutPendingRelay(ctx, PushRelay{ID: "p1", Token: "ptok", Agent: "a", Pending: &pending}); err != nil {
		t.Fatal(err)
	}
	got, err := s.PushRelay(ctx, "p1")
	if err != nil || got.TaskID != "" || got.Pending == nil || got.Pending.URL != pending.URL || got.Token != "ptok" {
		t.Fatalf("pending relay = %+v, %v", got, err)
	}
	if err := s.DeleteRelay(ctx, "p1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PushRelay(ctx, "p1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("after DeleteRelay: %v", err)
	}
}

func testPushSnapshot(t *testing.T, s PushStore) {
	ctx := context.Background()
	if err := s.PutPushSnapshot(ctx, "a", "t9", []byte(`{"id":"t9"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PushSnapshot(ctx, "a", "t9"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("snapshot of a task without configs = %v, want ErrNotFound (nothing kept for it)", err)
	}
	mustPutPush(t, s, pushConfig("a", "t1", "c1", 1), "r1")
	for _, snap := range []string{`{"id":"t1","v":1}`, `{"id":"t1","v":2}`} {
		if err := s.PutPushSnapshot(ctx, "a", "t1", []byte(snap)); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.PushSnapshot(ctx, "a", "t1")
	if err != nil || string(got) != `{"id":"t1","v":2}` {
		t.Fatalf("snapshot = %s, %v", got, err)
	}
}

func TestMemoryPushExpiresWithTheIndex(t *testing.T) {
	clock := newFakeClock()
	s := openMemory(MemoryConfig{TTL: time.Hour})(t, clock).(PushStore)
	mustPutPush(t, s, pushConfig("a", "t1", "c1", 1), "r1")
	clock.Advance(time.Hour)
	if configs, _, _ := s.PushConfigs(context.Background(), "a", "t1"); len(configs) != 0 {
		t.Fatalf("configs outlived the TTL: %+v", configs)
	}
	if _, err := s.PushRelay(context.Background(), "r1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("relay outlived the TTL: %v", err)
	}
}

// testPushPendingRelayBindsOnce: a pending relay (given in a send) is
// bound to the first task it is put with; binding it to another task
// after that is refused with ErrRelayBound and writes nothing, while the
// same task binds again. A delivery and the send's answer each bind it,
// to the task each names: a check before the write let both bind it, one
// task holding the config with a relay bound to the other.
func testPushPendingRelayBindsOnce(t *testing.T, s PushStore) {
	ctx := context.Background()
	pending := pushConfig("a", "", "c1", 1)
	relay := PushRelay{ID: "p2", Token: "ptok", Agent: "a", Pending: &pending}
	if err := s.PutPendingRelay(ctx, relay); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutPushConfig(ctx, pushConfig("a", "t1", "c1", 1), relay); err != nil {
		t.Fatalf("first binding: %v", err)
	}
	if _, err := s.PutPushConfig(ctx, pushConfig("a", "t2", "c1", 1), relay); !errors.Is(err, ErrRelayBound) {
		t.Fatalf("binding to a second task: %v, want ErrRelayBound", err)
	}
	if configs, r, err := s.PushConfigs(ctx, "a", "t2"); err != nil || len(configs) != 0 || r.ID != "" {
		t.Fatalf("the refused binding left %+v %+v %v", configs, r, err)
	}
	if got, err := s.PushRelay(ctx, "p2"); err != nil || got.TaskID != "t1" {
		t.Fatalf("relay after the refused binding: %+v %v, want bound to t1", got, err)
	}
	if _, err := s.PutPushConfig(ctx, pushConfig("a", "t1", "c1", 1), relay); err != nil {
		t.Fatalf("binding again to the same task: %v", err)
	}
	if configs, _, err := s.PushConfigs(ctx, "a", "t1"); err != nil || len(configs) != 1 {
		t.Fatalf("t1 holds %d configs (%v), want 1", len(configs), err)
	}
}
