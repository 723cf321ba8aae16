package proxy

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/redistopo"
	"github.com/a2agate/gateway/store"
)

// The cluster tests put two gateways in front of one backend, sharing a
// task index in a Redis Cluster (three primaries with a replica each)
// reached over mutual TLS, as two replicas behind a load balancer would.

// openClusterStore opens a store of c under prefix, closed when the test
// ends.
func openClusterStore(t *testing.T, c *redistopo.Cluster, prefix string) store.Store {
	t.Helper()
	s := redisIndex(t, store.RedisConfig{
		Mode: store.RedisCluster, Addresses: c.Addrs(), KeyPrefix: prefix, TTL: time.Hour,
		TLS:         store.RedisTLSConfig{Enabled: true, CAFile: c.TLS.CA, CertFile: c.TLS.ClientCert, KeyFile: c.TLS.ClientKey},
		DialTimeout: 500 * time.Millisecond, ReadTimeout: 500 * time.Millisecond, WriteTimeout: 500 * time.Millisecond,
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Ping(ctx); err != nil {
		t.Fatalf("the cluster index: %v", err)
	}
	return s
}

// clusterPrefix is a key prefix of the test's own.
func clusterPrefix() string {
	b := make([]byte, 8)
	rand.Read(b)
	return "a2agw-cluster-" + hex.EncodeToString(b) + ":"
}

// gatewayPair returns two gateways in front of one backend of kind b, each
// with its own client of the same index in c.
func gatewayPair(t *testing.T, c *redistopo.Cluster, b backendKind) (*testGateway, *testGateway) {
	t.Helper()
	backend, prefix := b.handler(t, nil), clusterPrefix()
	open := func() *testGateway {
		return newGatewayOpts(t, backend, b.version, Options{Tasks: openClusterStore(t, c, prefix)}, withAuth(t))
	}
	return open(), open()
}

// ownerCalls are the task-addressing calls a caller of c makes for task x.
func ownerCalls(c caller) map[string]func(x string) string {
	calls := map[string]func(x string) string{
		"get":    func(x string) string { return rpc(c.method(dialect.GetTask), `{"id":"`+x+`"}`) },
		"cancel": func(x string) string { return rpc(c.method(dialect.CancelTask), `{"id":"`+x+`"}`) },
		"continue": func(x string) string {
			return rpc(c.method(dialect.SendMessage), c.continuation("m2", x, "hi"))
		},
	}
	if c.d == dialect.V03 {
		calls["push list"] = func(x string) string { return rpc("tasks/pushNotificationConfig/list", `{"id":"`+x+`"}`) }
	} else {
		calls["push list"] = func(x string) string { return rpc("ListTaskPushNotificationConfigs", `{"taskId":"`+x+`"}`) }
	}
	return calls
}

// TestClusterIndexSharedByGateways: a task Alice makes through gateway A
// is hers through gateway B, in both caller dialects and before both
// backend dialects; to Bob, through B, it answers byte for byte as an
// unknown id does.
func TestClusterIndexSharedByGateways(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a six-node Redis Cluster; skipped in -short mode")
	}
	t.Parallel()
	c := redistopo.StartCluster(t)
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ga, gb := gatewayPair(t, c, b)
			aliceA, aliceB, bobB := ga.as(token(t, "alice")), gb.as(token(t, "alice")), gb.as(token(t, "bob"))
			for _, cl := range callers {
				t.Run(cl.d.String(), func(t *testing.T) {
					task := cl.task(t, mustResult(t, aliceA.call("1", cl.method(dialect.SendMessage), cl.send("m1-"+cl.d.String(), cl.text("input please"), ""))))
					id := task.Get("id").Str
					got := mustResult(t, aliceB.call("2", cl.method(dialect.GetTask), `{"id":"`+id+`"}`))
					if got.Get("id").Str != id || got.Get("status.state").Str != cl.state("input-required") {
						t.Fatalf("Alice's task through gateway B: %s", got.Raw)
					}
					for name, body := range ownerCalls(cl) {
						_, _, theirs := bobB.post(body(id), bobB.hdr(cl.d)...)
						_, _, none := bobB.post(body("no-such-task-0000"), bobB.hdr(cl.d)...)
						if string(theirs) != string(none) {
							t.Errorf("%s: Alice's task answers Bob differently from a missing one:\n%s\n%s", name, theirs, none)
						}
						if !strings.Contains(string(theirs), "-32001") {
							t.Errorf("%s: want -32001: %s", name, theirs)
						}
					}
					// Bob's refusals changed nothing: Alice continues through B.
					mustResult(t, aliceB.call("3", cl.method(dialect.SendMessage), cl.continuation("m3-"+cl.d.String(), id, "hello")))
					if st, _, body := aliceA.post(rpc(cl.method(dialect.GetTask), `{"id":"`+id+`"}`), aliceA.hdr(cl.d)...); st != http.StatusOK || strings.Contains(string(body), `"error"`) {
						t.Fatalf("Alice's task through gateway A after B: HTTP %d %s", st, body)
					}
				})
			}
		})
	}
}
