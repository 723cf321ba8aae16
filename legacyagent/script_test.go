package legacyagent

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
	a.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", strings.NewReader(rpcRequest(method, params))))
	if rec.Code != http.StatusOK {
		t.Fatalf("%s: status %d", method, rec.Code)
	}
	return rec.Body.String()
}

func serveResult(t *testing.T, a *Agent, method string, params any) obj {
	t.Helper()
	var out struct{ Result obj }
	if err := json.Unmarshal([]byte(serve(t, a, method, params)), &out); err != nil {
		t.Fatal(err)
	}
	return out.Result
}

func TestStepDelayPacesTransitions(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		a := New(Options{StepDelay: 300 * time.Millisecond})
		defer a.Close()
		// The bubble's clock starts at 2000-01-01T00:00:00Z; each transition
		// lands exactly one StepDelay after the previous one.
		body := serve(t, a, "message/stream", send("hello"))
		var stamps []string
		for _, frame := range strings.Split(strings.TrimSuffix(body, "\n\n"), "\n\n") {
			var ev struct {
				Result struct {
					Kind   string
					Status struct{ Timestamp string }
				}
			}
			if err := json.Unmarshal([]byte(strings.TrimPrefix(frame, "data: ")), &ev); err != nil {
				t.Fatalf("frame %q: %v", frame, err)
			}
			if ev.Result.Kind != "artifact-update" {
				stamps = append(stamps, ev.Result.Status.Timestamp)
			}
		}
		want := []string{
			"2000-01-01T00:00:00+00:00", // submitted, at once; no fraction when it is zero
			"2000-01-01T00:00:00.300000+00:00",
			"2000-01-01T00:00:00.900000+00:00", // the artifact took one step
		}
		if strings.Join(stamps, " ") != strings.Join(want, " ") {
			t.Fatalf("timestamps = %v, want %v", stamps, want)
		}
		if got := time.Since(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)); got != 900*time.Millisecond {
			t.Fatalf("the stream took %v, want 900ms", got)
		}
	})
}

func TestCancelStopsAPausedScript(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		a := New(Options{StepDelay: time.Second})
		defer a.Close()
		res := serveResult(t, a, "message/send", obj{
			"message":       userMessage("hello"),
			"configuration": obj{"acceptedOutputModes": []any{}, "blocking": false},
		})
		serveResult(t, a, "tasks/cancel", obj{"id": res["id"]})
		time.Sleep(10 * time.Second)
		synctest.Wait()
		got := serveResult(t, a, "tasks/get", obj{"id": res["id"]})
		if st := path(t, got, "status", "state"); st != "canceled" {
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
		go func() { blocked <- serve(t, a, "message/send", send("wait")) }()
		streamed := make(chan string)
		go func() { streamed <- serve(t, a, "message/stream", send("wait too")) }()
		synctest.Wait()

		a.Close() // returns only once every script has stopped
		if body := <-blocked; !strings.Contains(body, `"state":"working"`) {
			t.Fatalf("blocking send after Close = %s, want the working task", body)
		}
		if body := <-streamed; strings.Count(body, "data: ") != 2 {
			t.Fatalf("stream after Close = %q, want the task and working events", body)
		}
		a.Close() // idempotent
	})
}

func TestFormatTimestamp(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   time.Time
		want string
	}{
		{time.Date(2025, 7, 31, 12, 0, 0, 123456789, time.UTC), "2025-07-31T12:00:00.123456+00:00"},
		{time.Date(2025, 7, 31, 12, 0, 0, 0, time.UTC), "2025-07-31T12:00:00+00:00"},
		{time.Date(2025, 7, 31, 12, 0, 0, 999, time.UTC), "2025-07-31T12:00:00+00:00"},
		{time.Date(2025, 7, 31, 14, 0, 0, 5000, time.FixedZone("CEST", 2*3600)), "2025-07-31T12:00:00.000005+00:00"},
	}
	for _, tt := range tests {
		if got := formatTimestamp(tt.in); got != tt.want {
			t.Errorf("formatTimestamp(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
