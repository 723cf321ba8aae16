package reliability

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/internal/redistopo"
	"github.com/a2agate/gateway/internal/testfiles"
)

const (
	clusterIssuer = "https://issuer.test"
	clusterSecret = "0123456789abcdef0123456789abcdef-test-only"
)

// clusterGatewayConfig is a gateway publishing the 0.2.5 agent at /v03
// with HS256 auth, its task index in c over mutual TLS under prefix.
func clusterGatewayConfig(t *testing.T, c *redistopo.Cluster, backendURL, prefix string) string {
	secret := testfiles.Write(t, "hmac", []byte(clusterSecret+"\n"))
	var b strings.Builder
	b.WriteString("listen: 127.0.0.1:0\nadmin:\n  listen: 127.0.0.1:0\n")
	b.WriteString("store:\n  type: redis\n  redis:\n    mode: cluster\n    addresses:\n")
	for _, a := range c.Addrs() {
		fmt.Fprintf(&b, "      - %q\n", a)
	}
	fmt.Fprintf(&b, "    key_prefix: %q\n    ttl: 10m\n    dial_timeout: 500ms\n    read_timeout: 500ms\n    write_timeout: 500ms\n", prefix)
	fmt.Fprintf(&b, "    tls:\n      enabled: true\n      ca_file: %q\n      cert_file: %q\n      key_file: %q\n", c.TLS.CA, c.TLS.ClientCert, c.TLS.ClientKey)
	fmt.Fprintf(&b, "agents:\n  - name: legacy\n    path: %s\n    public_url: http://gateway.test%s\n", legacyPath, legacyPath)
	fmt.Fprintf(&b, "    backend:\n      url: %q\n      dialect: \"0.2.5\"\n    skills:\n      default: work\n", backendURL)
	fmt.Fprintf(&b, "    auth:\n      issuer: %q\n      algorithms: [HS256]\n      hmac_secret_file: %q\n", clusterIssuer, secret)
	return b.String()
}

// clusterToken is an HS256 token of sub for the agent at path, as the
// cluster configs' auth block accepts it.
func clusterToken(t *testing.T, sub, path string) string {
	t.Helper()
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
		"iss": clusterIssuer, "sub": sub, "aud": "http://gateway.test" + path,
		"exp": time.Now().Add(time.Hour).Unix(), "iat": time.Now().Unix(),
	}).SignedString([]byte(clusterSecret))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// rawCall posts a JSON-RPC call to g's /v03 as the holder of tok, in the
// dialect of version ("" for 0.x), and returns the answer's bytes.
func rawCall(t *testing.T, g *gatewayProc, tok, version, method, params string) []byte {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":` + params + `}`
	req, err := http.NewRequest(http.MethodPost, g.url+legacyPath, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+tok)
	if version != "" {
		req.Header.Set("A2A-Version", version)
	}
	client := &http.Client{Timeout: 10 * time.Second}
	res, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		t.Fatalf("%s: HTTP %d: %s", method, res.StatusCode, b)
	}
	return b
}

// TestClusterIndexAcrossGatewayProcesses runs two gateway binaries on one
// Redis Cluster index over mutual TLS: Alice's task made through one is
// hers through the other, and answers Bob as an unknown id does, in both
// dialects. Losing a whole shard turns /readyz 503 on both and task calls
// into -32603; the shard's return restores both without a restart.
func TestClusterIndexAcrossGatewayProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a six-node Redis Cluster and two gateways: skipped with -short")
	}
	f := newFault(t, "Redis Cluster shard lost and restored under two gateways")
	c := redistopo.StartFailFastCluster(t)
	be := startBackends(t)
	pb := make([]byte, 8)
	rand.Read(pb)
	prefix := "a2agw-reliability-" + hex.EncodeToString(pb) + ":"
	ga := startGateway(t, clusterGatewayConfig(t, c, be.legacy.URL+"/", prefix))
	gb := startGateway(t, clusterGatewayConfig(t, c, be.legacy.URL+"/", prefix))
	alice, bob := clusterToken(t, "alice", legacyPath), clusterToken(t, "bob", legacyPath)
	for _, g := range []*gatewayProc{ga, gb} {
		if status, body := g.readyz(t); status != http.StatusOK {
			t.Fatalf("not ready with the cluster up: %d %s", status, body)
		}
	}

	dialects := []struct{ version, send, get, msg string }{
		{"", "message/send", "tasks/get", `{"message":{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"text","text":"hello"}]}}`},
		{"1.0", "SendMessage", "GetTask", `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hello"}]}}`},
	}
	var ids []string
	for _, d := range dialects {
		sent := gjson.ParseBytes(rawCall(t, ga, alice, d.version, d.send, d.msg))
		id := sent.Get("result.id").Str
		if d.version != "" {
			id = sent.Get("result.task.id").Str
		}
		if id == "" {
			t.Fatalf("%s through gateway A: %s", d.send, sent.Raw)
		}
		ids = append(ids, id)
		if got := gjson.GetBytes(rawCall(t, gb, alice, d.version, d.get, `{"id":"`+id+`"}`), "result.id").Str; got != id {
			t.Fatalf("%s of Alice's task through gateway B answered %q", d.get, got)
		}
		theirs := rawCall(t, gb, bob, d.version, d.get, `{"id":"`+id+`"}`)
		none := rawCall(t, gb, bob, d.version, d.get, `{"id":"no-such-task-0000"}`)
		if string(theirs) != string(none) || !strings.Contains(string(theirs), "-32001") {
			t.Fatalf("%s of Alice's task by Bob through gateway B:\n%s\nan unknown id:\n%s", d.get, theirs, none)
		}
	}
	f.saw("Alice's tasks made through A served to her by B, to Bob as unknown ids, in both dialects")

	// The shard of the agent's keys (README, "Redis key layout").
	primary, replica := c.Shard(c.Slot("{6:legacy}"))
	primary.Kill()
	replica.Kill()
	lost := time.Now()
	for _, g := range []*gatewayProc{ga, gb} {
		body := g.indexUnready(t, 20*time.Second)
		for i, d := range dialects {
			e := gjson.GetBytes(rawCall(t, g, alice, d.version, d.get, `{"id":"`+ids[i]+`"}`), "error")
			if e.Get("code").Int() != -32603 || !strings.Contains(e.Get("message").Str, indexDown) {
				t.Errorf("%s while a shard is lost: %s, want -32603 %q", d.get, e.Raw, indexDown)
			}
		}
		f.saw("shard lost: /readyz 503 %q, task calls -32603", reasonOf(body))
	}

	c.Restart(primary)
	c.Restart(replica)
	for _, g := range []*gatewayProc{ga, gb} {
		eventually(t, 30*time.Second, "/readyz to say 200 again", func() bool {
			status, _ := g.readyz(t)
			return status == http.StatusOK
		})
	}
	// The shard's nodes keep nothing on disk: its tasks went with them,
	// and new ones are made and shared again.
	// The first calls may still meet connections pooled before the loss:
	// they fail closed, and are dropped.
	failedAfterReady, failingFor := 0, time.Duration(0)
	for _, d := range dialects {
		var id string
		failingFor += eventually(t, 10*time.Second, d.send+" to succeed again", func() bool {
			sent := gjson.ParseBytes(rawCall(t, gb, alice, d.version, d.send, strings.Replace(d.msg, "m1", "m2", 1)))
			if id = sent.Get("result.id").Str; d.version != "" {
				id = sent.Get("result.task.id").Str
			}
			if id == "" {
				if e := sent.Get("error"); e.Get("code").Int() != -32603 || !strings.Contains(e.Get("message").Str, indexDown) {
					t.Fatalf("%s after the shard came back: %s, want a result or -32603", d.send, sent.Raw)
				}
				failedAfterReady++
			}
			return id != ""
		})
		if got := gjson.GetBytes(rawCall(t, ga, alice, d.version, d.get, `{"id":"`+id+`"}`), "result.id").Str; got != id {
			t.Fatalf("%s through gateway A after the shard came back answered %q", d.get, got)
		}
	}
	f.saw("service back %s after the loss, on both gateways, without a restart (after /readyz 200, %d calls failed closed over %s)", time.Since(lost).Round(time.Millisecond), failedAfterReady, failingFor.Round(time.Millisecond))
	for _, g := range []*gatewayProc{ga, gb} {
		if !g.running() || g.log.matching(`"msg":"listening"`) != 1 {
			t.Errorf("a gateway restarted or exited\n%s", g.log.text())
		}
	}
}
