package proxy

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	pb03 "github.com/a2aproject/a2a-go/a2apb"
	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/dialect"
)

// turnBackend streams one task's turn: input-required, then, after the
// caller's answer the test does not send, completed. A 0.x backend marks
// each update final or not; a 1.0 backend has no flag, and the stream ends
// at input-required.
func turnBackend(version dialect.Version) http.Handler {
	return scripted(func(w http.ResponseWriter, r *http.Request, id string) {
		w.Header().Set("Content-Type", "text/event-stream")
		if version == dialect.Version10 {
			sseWrite(w, `data: {"jsonrpc":"2.0","id":`+id+`,"result":{"statusUpdate":{"taskId":"t1","contextId":"c1","status":{"state":"TASK_STATE_INPUT_REQUIRED"}}}}`+"\n\n")
			return
		}
		update := func(state string, final bool) string {
			f := "false"
			if final {
				f = "true"
			}
			return `data: {"jsonrpc":"2.0","id":` + id + `,"result":{"kind":"status-update","taskId":"t1","contextId":"c1","status":{"state":"` + state + `"},"final":` + f + `}}` + "\n\n"
		}
		sseWrite(w, update("input-required", false), update("working", false), update("completed", true))
	})
}

// TestV03BindingsCarryTheBackendsFinalFlag: a caller of the 0.3 gRPC or
// REST binding gets the final flag a 0.x backend set on each status
// update, so an input-required it marked not final leaves the caller
// reading (a2a-go v0.3's client stops at the first final event); from a
// 1.0 backend, which has no flag, input-required is final, as the stream
// ends there. Before, both bindings derived the flag from the state, so
// input-required was always final.
func TestV03BindingsCarryTheBackendsFinalFlag(t *testing.T) {
	for _, tc := range []struct {
		version dialect.Version
		want    []string // state: final, each status update in order
	}{
		{dialect.Version03, []string{"TASK_STATE_INPUT_REQUIRED:false", "TASK_STATE_WORKING:false", "TASK_STATE_COMPLETED:true"}},
		{dialect.Version025, []string{"TASK_STATE_INPUT_REQUIRED:false", "TASK_STATE_WORKING:false", "TASK_STATE_COMPLETED:true"}},
		{dialect.Version10, []string{"TASK_STATE_INPUT_REQUIRED:true"}},
	} {
		t.Run(string(tc.version), func(t *testing.T) {
			tg := newGateway(t, turnBackend(tc.version), tc.version)
			g := newGRPCGateway(t, tg)
			s, err := pb03.NewA2AServiceClient(g.conn).SendStreamingMessage(context.Background(), &pb03.SendMessageRequest{
				Request: &pb03.Message{MessageId: "m1", Role: pb03.Role_ROLE_USER, Parts: []*pb03.Part{{Part: &pb03.Part_Text{Text: "hi"}}}},
			})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for {
				ev, err := s.Recv()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("0.3 gRPC: %v after %v", err, got)
				}
				if u := ev.GetStatusUpdate(); u != nil {
					got = append(got, u.GetStatus().GetState().String()+":"+boolString(u.GetFinal()))
				}
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("0.3 gRPC status updates %v, want %v", got, tc.want)
			}

			res, body := tg.request(t, http.MethodPost, "/v1/message:stream", v03Send("hi", false), "Content-Type", "application/json")
			if res.StatusCode != http.StatusOK {
				t.Fatalf("0.3 REST: HTTP %d %s", res.StatusCode, body)
			}
			got = got[:0]
			for line := range strings.SplitSeq(string(body), "\n") {
				if d, ok := strings.CutPrefix(line, "data: "); ok {
					if u := gjson.Get(d, "statusUpdate"); u.Exists() {
						got = append(got, u.Get("status.state").Str+":"+boolString(u.Get("final").Bool()))
					}
				}
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("0.3 REST status updates %v, want %v: %s", got, tc.want, body)
			}
		})
	}
}

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}
