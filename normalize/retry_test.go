package normalize

import (
	"testing"

	"github.com/a2agate/gateway/dialect"
)

func TestAppendSendDigest(t *testing.T) {
	digest := func(params string) string {
		t.Helper()
		d, _, err := AppendSendDigest(nil, []byte(params))
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	base := digest(`{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]},"configuration":{"acceptedOutputModes":["text/plain"]}}`)
	for _, same := range []string{
		`{"message":{"messageId":"m2","role":"ROLE_USER","parts":[{"text":"hi"}]},"configuration":{"acceptedOutputModes":["text/plain"]}}`,
		`{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]},"configuration":{"acceptedOutputModes":["text/plain"],"returnImmediately":true}}`,
	} {
		if d := digest(same); d != base {
			t.Errorf("%s: another digest for the same work", same)
		}
	}
	if digest(`{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]},"configuration":{"historyLength":3,"acceptedOutputModes":["text/plain"]}}`) !=
		digest(`{"message":{"messageId":"m9","role":"ROLE_USER","parts":[{"text":"hi"}]},"configuration":{"historyLength":0,"acceptedOutputModes":["text/plain"]}}`) {
		t.Error("historyLength changed the digest")
	}
	for _, other := range []string{
		`{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"bye"}]},"configuration":{"acceptedOutputModes":["text/plain"]}}`,
		`{"message":{"messageId":"m1","role":"ROLE_USER","contextId":"c","parts":[{"text":"hi"}]},"configuration":{"acceptedOutputModes":["text/plain"]}}`,
		`{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]},"configuration":{"acceptedOutputModes":["application/json"]}}`,
	} {
		if digest(other) == base {
			t.Errorf("%s: the digest of other work", other)
		}
	}
	if _, _, err := AppendSendDigest(nil, []byte(`[1]`)); err == nil {
		t.Error("a digest of params that are not an object")
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
