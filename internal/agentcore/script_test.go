package agentcore_test

import (
	"encoding/json"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/a2agate/gateway/internal/agentcore"
	"github.com/a2agate/gateway/internal/agenttest"
)

func TestStepDelayPacesTransitions(t *testing.T) {
	forEach(t, func(t *testing.T, d dialect) {
		synctest.Test(t, func(t *testing.T) {
			a := d.new(agentcore.Options{StepDelay: 300 * time.Millisecond})
			defer a.Close()
			// The bubble's clock starts at 2000-01-01T00:00:00Z; each
			// transition lands exactly one StepDelay after the previous one.
			body := d.Serve(t, a, d.stream, d.sendText("hello"))
			var stamps []string
			for _, frame := range strings.Split(strings.TrimSuffix(body, "\n\n"), "\n\n") {
				var ev struct{ Result obj }
				if err := json.Unmarshal([]byte(strings.TrimPrefix(frame, "data: ")), &ev); err != nil {
					t.Fatalf("frame %q: %v", frame, err)
				}
				if kind, inner := d.event(t, ev.Result); kind != "artifact" {
					stamps = append(stamps, agenttest.Str(t, inner, "status", "timestamp"))
				}
			}
			if strings.Join(stamps, " ") != strings.Join(d.stepStamps, " ") {
				t.Fatalf("timestamps = %v, want %v", stamps, d.stepStamps)
			}
			if got := time.Since(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)); got != 900*time.Millisecond {
				t.Fatalf("the stream took %v, want 900ms", got)
			}
		})
	})
}

func TestCancelStopsAPausedScript(t *testing.T) {
	forEach(t, func(t *testing.T, d dialect) {
		synctest.Test(t, func(t *testing.T) {
			a := d.new(agentcore.Options{StepDelay: time.Second})
			defer a.Close()
			res := d.task(t, d.ServeResult(t, a, d.send, d.sendNow(d.userMessage("hello"))))
			d.ServeResult(t, a, d.cancel, obj{"id": res["id"]})
			time.Sleep(10 * time.Second)
			synctest.Wait()
			got := d.ServeResult(t, a, d.get, obj{"id": res["id"]})
			d.wantState(t, "get after the cancel", got, "canceled")
			if _, ok := got["artifacts"]; ok {
				t.Fatal("the script went on after the cancel")
			}
		})
	})
}

func TestCloseEndsScriptsStreamsAndBlockingSends(t *testing.T) {
	forEach(t, func(t *testing.T, d dialect) {
		synctest.Test(t, func(t *testing.T) {
			a := d.new(agentcore.Options{})
			blocked := make(chan string)
			go func() { blocked <- d.Serve(t, a, d.send, d.sendText("wait")) }()
			streamed := make(chan string)
			go func() { streamed <- d.Serve(t, a, d.stream, d.sendText("wait too")) }()
			synctest.Wait()

			a.Close() // returns only once every script has stopped
			if body := <-blocked; !strings.Contains(body, `"state":"`+d.states["working"]+`"`) {
				t.Fatalf("blocking send after Close = %s, want the working task", body)
			}
			if body := <-streamed; strings.Count(body, "data: ") != 2 {
				t.Fatalf("stream after Close = %q, want the task and working events", body)
			}
			a.Close() // idempotent
		})
	})
}
