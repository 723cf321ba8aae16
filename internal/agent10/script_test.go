package agent10

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// serve runs one JSON-RPC call straight through ServeHTTP, so that it can
// run inside a synctest bubble, and returns the response body.
func serve(t *testing.T, a *Agent, method string, params any) string {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(rpcRequest(method, params)))
	req.Header.Set("A2A-Version", "1.0")
	a.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("%s: status %d", method, rec.Code)
	}
	return rec.Body.String()
}

func serveResult(t *testing.T, a *Agent, method string, params any) obj {
	t.Helper()
	var out struct {
		Result obj
		Error  obj
	}
	if err := json.Unmarshal([]byte(serve(t, a, method, params)), &out); err != nil {
		t.Fatal(err)
	}
	if out.Error != nil {
		t.Fatalf("%s: %v", method, out.Error)
	}
	return out.Result
}

func TestStepDelayPacesTransitions(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		a := New(Options{StepDelay: 300 * time.Millisecond})
		defer a.Close()
		// The bubble's clock starts at 2000-01-01T00:00:00Z.
		body := serve(t, a, "SendStreamingMessage", send("hello"))
		var stamps []string
		for _, frame := range strings.Split(strings.TrimSuffix(body, "\n\n"), "\n\n") {
			var ev struct {
				Result map[string]struct {
					Status struct{ Timestamp string }
				}
			}
			if err := json.Unmarshal([]byte(strings.TrimPrefix(frame, "data: ")), &ev); err != nil {
				t.Fatalf("frame %q: %v", frame, err)
			}
			for key, inner := range ev.Result {
				if key != "artifactUpdate" {
					stamps = append(stamps, inner.Status.Timestamp)
				}
			}
		}
		want := []string{"2000-01-01T00:00:00.000Z", "2000-01-01T00:00:00.300Z", "2000-01-01T00:00:00.900Z"}
		if strings.Join(stamps, " ") != strings.Join(want, " ") {
			t.Fatalf("timestamps = %v, want %v", stamps, want)
		}
	})
}

func TestCancelStopsAPausedScript(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		a := New(Options{StepDelay: time.Second})
		defer a.Close()
		res := serveResult(t, a, "SendMessage", obj{"message": userMessage("hello"), "configuration": obj{"returnImmediately": true}})
		id := path(t, res, "task", "id")
		serveResult(t, a, "CancelTask", obj{"id": id})
		time.Sleep(10 * time.Second)
		synctest.Wait()
		got := serveResult(t, a, "GetTask", obj{"id": id})
		if st := path(t, got, "status", "state"); st != "TASK_STATE_CANCELED" {
			t.Fatalf("state = %v, want canceled", st)
		}
		if _, ok := got["artifacts"]; ok {
			t.Fatal("the script went on after the cancel")
		}
	})
}

func TestCloseEndsScriptsStreamsAndBlockingSends(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		a := New(Options{})
		blocked := make(chan string)
		go func() { blocked <- serve(t, a, "SendMessage", send("wait")) }()
		streamed := make(chan string)
		go func() { streamed <- serve(t, a, "SendStreamingMessage", send("wait too")) }()
		synctest.Wait()

		a.Close()
		if body := <-blocked; !strings.Contains(body, `"state":"TASK_STATE_WORKING"`) {
			t.Fatalf("blocking send after Close = %s, want the working task", body)
		}
		if body := <-streamed; strings.Count(body, "data: ") != 2 {
			t.Fatalf("stream after Close = %q, want the task and working events", body)
		}
		a.Close()
	})
}

func TestFormatTimestamp(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   time.Time
		want string
	}{
		{time.Date(2025, 7, 31, 12, 0, 0, 123456789, time.UTC), "2025-07-31T12:00:00.123Z"},
		{time.Date(2025, 7, 31, 12, 0, 0, 0, time.UTC), "2025-07-31T12:00:00.000Z"},
		{time.Date(2025, 7, 31, 14, 0, 0, 5e6, time.FixedZone("CEST", 2*3600)), "2025-07-31T12:00:00.005Z"},
	}
	for _, tt := range tests {
		if got := formatTimestamp(tt.in); got != tt.want {
			t.Errorf("formatTimestamp(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestProtoBytes(t *testing.T) {
	t.Parallel()
	for _, in := range []string{`"+/8="`, `"+/8"`, `"-_8="`, `"-_8"`} {
		var b protoBytes
		if err := json.Unmarshal([]byte(in), &b); err != nil || string(b) != "\xfb\xff" {
			t.Errorf("decoding %s = %x, %v", in, []byte(b), err)
		}
		if out, _ := json.Marshal(b); string(out) != `"+/8="` {
			t.Errorf("encoding %s = %s, want \"+/8=\"", in, out)
		}
	}
	for _, in := range []string{`"@@"`, `5`, `"+_8"`} {
		var b protoBytes
		if err := json.Unmarshal([]byte(in), &b); err == nil {
			t.Errorf("decoding %s: no error", in)
		}
	}
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }
