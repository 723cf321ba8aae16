package rest

import (
	"net/http"
	"net/http/httptest"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// TestDeeplyNestedBodyRefusedWithoutRecursion: a body of nothing but
// opening brackets, as long as the body limit allows, is refused naming the
// depth bound, on a route with a body (1.0 and 0.3) and one without, and on
// a goroutine stack of 32 MiB. gjson's validator, which read it before,
// recursed once a bracket: 512 MiB of stack for a 4 MiB body, and past
// Go's 1 GiB stack limit (a fatal error: the whole gateway down) for a
// max_body_bytes of 16 MiB.
func TestDeeplyNestedBodyRefusedWithoutRecursion(t *testing.T) {
	defer debug.SetMaxStack(debug.SetMaxStack(32 << 20))
	body := strings.Repeat("[", DefaultMaxBodyBytes)
	for _, tc := range []struct{ method, path, says string }{
		{"POST", "/message:send", "the request body nests deeper than 100 levels"},
		{"POST", "/v1/message:send", "the request body nests deeper than 100 levels"},
		{"POST", "/tasks/t1:cancel", "the request body nests deeper than 100 levels"},
		{"GET", "/tasks/t1", "takes no request body"},
	} {
		core := &recorder{reply: `{"jsonrpc":"2.0","id":1,"result":{}}`}
		req := httptest.NewRequest(tc.method, tc.path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		NewHandler(core, Options{}).ServeHTTP(w, req)
		msg := gjson.Get(w.Body.String(), "error.message").Str
		if strings.HasPrefix(tc.path, "/v1/") {
			msg = gjson.Get(w.Body.String(), "message").Str
		}
		if w.Code != http.StatusBadRequest || !strings.Contains(msg, tc.says) || core.got != nil {
			t.Errorf("%s %s: HTTP %d %.300s, want 400 saying %q", tc.method, tc.path, w.Code, w.Body.String(), tc.says)
		}
	}
}

// TestV03BodyReadAsSent: a 0.3 body the translation to 1.0 would read
// otherwise than as sent (a member dropped, a value changed) is refused,
// saying what to change, and the core is not called.
func TestV03BodyReadAsSent(t *testing.T) {
	const msg = `"messageId":"m1","role":"ROLE_USER"`
	for _, tc := range []struct{ name, path, body, says string }{
		{"not UTF-8", "/v1/message:send", `{"message":{` + msg + `,"content":[{"text":"caf` + "\xe9" + `"}]}}`,
			"the request body is not valid UTF-8"},
		{"a key twice", "/v1/message:send", `{"message":{` + msg + `,"content":[{"text":"a"}]},"message":{` + msg + `,"content":[{"text":"b"}]}}`,
			`the request body names "message" twice`},
		{"a key twice in a part", "/v1/message:send", `{"message":{` + msg + `,"content":[{"text":"a","text":"b"}]}}`,
			`the request body names "text" twice, in message.content[0]`},
		{"a key twice in a push config", "/v1/tasks/t1/pushNotificationConfigs", `{"pushNotificationConfig":{"url":"https://h.example/","token":"a","token":"b"}}`,
			`the request body names "token" twice, in pushNotificationConfig`},
		{"a field in both spellings", "/v1/message:send", `{"message":{"messageId":"m1","message_id":"m2","role":"ROLE_USER","content":[{"text":"a"}]}}`,
			`"messageId" and "message_id" are one field spelt two ways: send it once`},
		{"the message in both spellings", "/v1/message:send", `{"message":{` + msg + `,"content":[{"text":"a"}]},"request":{` + msg + `,"content":[{"text":"b"}]}}`,
			`"message" and "request" are one field spelt two ways`},
		{"parts beside content", "/v1/message:send", `{"message":{` + msg + `,"content":[{"text":"a"}],"parts":[{"text":"b"}]}}`,
			`"content" and "parts" are one field spelt two ways`},
		{"a push config in both spellings", "/v1/tasks/t1/pushNotificationConfigs", `{"pushNotificationConfig":{"url":"https://a.example/"},"push_notification_config":{"url":"https://b.example/"}}`,
			`"pushNotificationConfig" and "push_notification_config" are one field spelt two ways`},
		{"configuration not an object", "/v1/message:send", `{"message":{` + msg + `,"content":[{"text":"a"}]},"configuration":"blocking"}`,
			`configuration must be an object, not a string`},
		{"message not an object", "/v1/message:send", `{"message":"hello"}`,
			`message must be an object, not a string`},
		{"content not an array", "/v1/message:send", `{"message":{` + msg + `,"content":{"text":"a"}}}`,
			`content must be an array, not an object`},
		{"mimeType not a string", "/v1/message:send", `{"message":{` + msg + `,"content":[{"file":{"fileWithUri":"https://f.example/","mimeType":7}}]}}`,
			`mimeType must be a string, not a number`},
		{"schemes not an array", "/v1/tasks/t1/pushNotificationConfigs", `{"pushNotificationConfig":{"url":"https://h.example/","authentication":{"schemes":"Bearer"}}}`,
			`schemes must be an array, not a string`},
		{"authentication not an object", "/v1/tasks/t1/pushNotificationConfigs", `{"pushNotificationConfig":{"url":"https://h.example/","authentication":"Bearer"}}`,
			`authentication must be an object, not a string`},
		{"push config not an object", "/v1/tasks/t1/pushNotificationConfigs", `{"pushNotificationConfig":"https://h.example/"}`,
			`pushNotificationConfig must be an object, not a string`},
		{"a part with text and a file", "/v1/message:send", `{"message":{` + msg + `,"content":[{"text":"a","file":{"fileWithUri":"https://f.example/"}}]}}`,
			`a part holds one of text, file and data, not file and text`},
		{"a part with a file and data", "/v1/message:send", `{"message":{` + msg + `,"content":[{"file":{"fileWithUri":"https://f.example/"},"data":{"data":{"a":1}}}]}}`,
			`a part holds one of text, file and data, not data and file`},
		{"a file with a URI and bytes", "/v1/message:send", `{"message":{` + msg + `,"content":[{"file":{"fileWithUri":"https://f.example/","fileWithBytes":"aGk="}}]}}`,
			`a file part's file holds one of fileWithUri and fileWithBytes, not both`},
		{"a cancel named for another task", "/v1/tasks/t1:cancel", `{"name":"tasks/t2"}`,
			`name "tasks/t2" names task "t2", not the path's "t1"`},
		{"a subscribe named for another task", "/v1/tasks/t1:subscribe", `{"name":"tasks/t2"}`,
			`name "tasks/t2" names task "t2", not the path's "t1"`},
		{"a cancel with a name not a task's", "/v1/tasks/t1:cancel", `{"name":"t1"}`,
			`name "t1" is not tasks/{id}`},
		{"a cancel with a name not a string", "/v1/tasks/t1:cancel", `{"name":["tasks/t1"]}`,
			`name must be a string, not an array`},
		{"a config id in the query not the body's", "/v1/tasks/t1/pushNotificationConfigs?configId=c2", `{"pushNotificationConfig":{"id":"c3","url":"https://h.example/"}}`,
			`query parameter configId names "c2", the body "c3": give the config id once, or the same in both`},
		{"a config id in the query not the name's", "/v1/tasks/t1/pushNotificationConfigs?config_id=c2", `{"name":"tasks/t1/pushNotificationConfigs/c1","pushNotificationConfig":{"url":"https://h.example/"}}`,
			`query parameter config_id names "c2", the body "c1": give the config id once, or the same in both`},
		{"name not a string", "/v1/tasks/t1/pushNotificationConfigs", `{"name":7,"pushNotificationConfig":{"url":"https://h.example/"}}`,
			`name must be a string, not a number`},
	} {
		core := &recorder{reply: `{"jsonrpc":"2.0","id":1,"result":{}}`}
		req := httptest.NewRequest("POST", tc.path, strings.NewReader(tc.body))
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		NewHandler(core, Options{}).ServeHTTP(w, req)
		if got := gjson.Get(w.Body.String(), "message").Str; w.Code != http.StatusBadRequest || !strings.Contains(got, tc.says) || core.got != nil {
			t.Errorf("%s: HTTP %d %s (the core got %s), want 400 saying %q", tc.name, w.Code, w.Body.String(), core.got, tc.says)
		}
	}
}

// TestVersionQueryKeyEncoded: A2A-Version in the query is the version
// however its name is percent-encoded, as url.ParseQuery reads every
// other parameter's name, rather than an "unknown query parameter
// \"A2A-Version\"" that names the very parameter the binding takes.
func TestVersionQueryKeyEncoded(t *testing.T) {
	for _, q := range []string{"A2A-Version=0.3", "A2A%2DVersion=0.3", "A2A%2dVersion=0%2E3&historyLength=2"} {
		core := &recorder{reply: `{"jsonrpc":"2.0","id":1,"result":{}}`}
		w := httptest.NewRecorder()
		NewHandler(core, Options{}).ServeHTTP(w, httptest.NewRequest("GET", "/tasks/t1?"+q, nil))
		if w.Code != http.StatusOK || core.header.Get("A2A-Version") != "0.3" {
			t.Errorf("?%s: HTTP %d %s, the core got A2A-Version %q", q, w.Code, w.Body.String(), core.header.Get("A2A-Version"))
		}
	}
}
