package normalize

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/a2agate/gateway/dialect"
)

func TestAppendSendDigest(t *testing.T) {
	base := sendDigest(t, `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]},"configuration":{"acceptedOutputModes":["text/plain"]}}`)
	for _, same := range []string{
		`{"message":{"messageId":"m2","role":"ROLE_USER","parts":[{"text":"hi"}]},"configuration":{"acceptedOutputModes":["text/plain"]}}`,
		`{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]},"configuration":{"acceptedOutputModes":["text/plain"],"returnImmediately":true}}`,
	} {
		if d := sendDigest(t, same); d != base {
			t.Errorf("%s: another digest for the same work", same)
		}
	}
	// A configuration that only shapes the answer is none: a blocking send
	// that left its mode to the default, retried non-blocking.
	bare := sendDigest(t, `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}`)
	for _, same := range []string{
		`{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]},"configuration":{"returnImmediately":true}}`,
		`{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]},"configuration":{"blocking":false,"historyLength":2}}`,
		`{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]},"configuration":{}}`,
	} {
		if d := sendDigest(t, same); d != bare {
			t.Errorf("%s: another digest than the send without a configuration", same)
		}
	}
	if sendDigest(t, `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]},"configuration":{"historyLength":3,"acceptedOutputModes":["text/plain"]}}`) !=
		sendDigest(t, `{"message":{"messageId":"m9","role":"ROLE_USER","parts":[{"text":"hi"}]},"configuration":{"historyLength":0,"acceptedOutputModes":["text/plain"]}}`) {
		t.Error("historyLength changed the digest")
	}
	for _, other := range []string{
		`{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"bye"}]},"configuration":{"acceptedOutputModes":["text/plain"]}}`,
		`{"message":{"messageId":"m1","role":"ROLE_USER","contextId":"c","parts":[{"text":"hi"}]},"configuration":{"acceptedOutputModes":["text/plain"]}}`,
		`{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]},"configuration":{"acceptedOutputModes":["application/json"]}}`,
	} {
		if sendDigest(t, other) == base {
			t.Errorf("%s: the digest of other work", other)
		}
	}
	if _, _, err := AppendSendDigest(nil, []byte(`[1]`)); err == nil {
		t.Error("a digest of params that are not an object")
	}
}

// TestSendDigestStable pins a digest, the xxHash64 of
// {"message":{"parts":[{"text":"hi"}],"role":"ROLE_USER"}}: records are
// shared by every replica and outlive a deploy, so a digest that changed
// between builds would take each retry across an upgrade for a reused key.
func TestSendDigestStable(t *testing.T) {
	d, _, err := AppendSendDigest(nil, []byte(`{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := "50d0d18f2aec9db1"; d != want {
		t.Errorf("digest %s, want %s", d, want)
	}
}

func TestSendResultOfTask(t *testing.T) {
	if got := string(SendResultOfTask(dialect.V10, []byte(`{"id":"t"}`))); got != `{"task":{"id":"t"}}` {
		t.Fatal(got)
	}
	if got := string(SendResultOfTask(dialect.V03, []byte(`{"id":"t"}`))); got != `{"id":"t"}` {
		t.Fatal(got)
	}
	if got := string(GetTaskParams(`a"b`)); got != `{"id":"a\"b"}` {
		t.Fatal(got)
	}
}

// TestSendDigestCanonical: the same message re-serialised (members in
// another order, other whitespace, other escapes of the same text) is the
// same send; a member's value moved to another member is not.
func TestSendDigestCanonical(t *testing.T) {
	base := sendDigest(t, `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hé \"x\"\n"},{"data":{"a":1,"b":[true,null]}}],"metadata":{"k":"v","j":2}},"configuration":{"acceptedOutputModes":["text/plain"],"blocking":true}}`)
	for _, same := range []string{
		`{"configuration":{"blocking":false,"acceptedOutputModes":["text/plain"]},"message":{"metadata":{"j":2,"k":"v"},"parts":[{"text":"hé \"x\"\n"},{"data":{"b":[true,null],"a":1}}],"role":"ROLE_USER","messageId":"m2"}}`,
		// Escaped member names are the names they spell: left out, sorted.
		`{"\u006dessage":{"me\u0073sageId":"m3","role":"ROLE_USER","parts":[{"text":"hé \"x\"\n"},{"d\u0061ta":{"b":[true,null],"a":1}}],"metadata":{"k":"v","j":2}},"configuration":{"acceptedOutputModes":["text/plain"],"bl\u006fcking":false}}`,
		"{ \"message\" : {\n\t\"messageId\": \"m1\", \"role\": \"ROLE_USER\",\r\n \"parts\": [ {\"text\": \"h\\u00e9 \\\"x\\\"\\u000a\"}, {\"data\": {\"a\": 1, \"b\": [ true , null ]}} ], \"metadata\": {\"k\": \"\\u0076\", \"j\": 2} },\n \"configuration\": {\"acceptedOutputModes\": [\"text\\/plain\"]} }",
	} {
		if d := sendDigest(t, same); d != base {
			t.Errorf("%s: another digest for the same message", same)
		}
	}
	for _, other := range []string{
		// The parts' order is the message's.
		`{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"data":{"a":1,"b":[true,null]}},{"text":"hé \"x\"\n"}],"metadata":{"k":"v","j":2}},"configuration":{"acceptedOutputModes":["text/plain"]}}`,
		// A messageId elsewhere than the message's own counts.
		`{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hé \"x\"\n"},{"data":{"a":1,"b":[true,null]}}],"metadata":{"k":"v","j":2,"messageId":"m"}},"configuration":{"acceptedOutputModes":["text/plain"]}}`,
		`{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hé \"x\"\n"},{"data":{"a":1,"b":[true,null]}}],"metadata":{"k":"v","j":2}},"configuration":{"acceptedOutputModes":["text/plain"]},"metadata":{"blocking":true}}`,
	} {
		if sendDigest(t, other) == base {
			t.Errorf("%s: the digest of another message", other)
		}
	}
}

// BenchmarkSendDigest digests the typical send of BenchmarkRequest in 1.0
// form, as the gateway does for every first send.
//
//	go test -run '^$' -bench SendDigest -benchmem ./normalize
func BenchmarkSendDigest(b *testing.B) {
	env, err := ParseRequest(benchSendV03)
	if err != nil {
		b.Fatal(err)
	}
	v10, _, err := Params(env.Op, env.Dialect, dialect.V10, env.Params)
	if err != nil {
		b.Fatal(err)
	}
	var room []byte
	b.ReportAllocs()
	for b.Loop() {
		if _, room, err = AppendSendDigest(room[:0], v10); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSendDigestIgnoresSerialisation: every send request of the golden
// files, re-serialised by encoding/json (members sorted, indented, its
// own escapes), has the digest of the original.
func TestSendDigestIgnoresSerialisation(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "request", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		body, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		env, err := ParseRequest(body)
		if err != nil || (env.Op != dialect.SendMessage && env.Op != dialect.SendStreamingMessage) {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(env.Params))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		again, err := json.MarshalIndent(v, " ", "\t")
		if err != nil {
			t.Fatal(err)
		}
		a, _, err1 := AppendSendDigest(nil, env.Params)
		b, _, err2 := AppendSendDigest(nil, again)
		if err1 != nil || err2 != nil || a != b {
			t.Errorf("%s: the re-serialised send has another digest (%v, %v):\n%s\n%s", f, err1, err2, env.Params, again)
		}
		n++
	}
	if n < 10 {
		t.Fatalf("only %d send requests among the golden files", n)
	}
}

// sendDigest is params' digest; params must be a send's.
func sendDigest(t *testing.T, params string) string {
	t.Helper()
	d, _, err := AppendSendDigest(nil, []byte(params))
	if err != nil {
		t.Fatal(err)
	}
	return d
}
