package proxy

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
)

// TestGoSDKStreamErrors runs the streaming calls of the Go 1.0 SDK's
// JSON-RPC client (a2a-go v2), which reads only the data lines of a stream
// request's answer, through the gateway: an error, whether the backend's or
// found before the backend is called, must reach it as its error code, not
// as an empty, successful stream.
func TestGoSDKStreamErrors(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			g := newGateway(t, b.handler(t, nil), b.version)
			tr := a2aclient.NewJSONRPCTransport(g.url, http.DefaultClient)
			ctx := context.Background()
			firstError := func(events func(func(a2a.Event, error) bool)) error {
				t.Helper()
				for ev, err := range events {
					if err != nil {
						return err
					}
					t.Fatalf("want an error, got the event %#v", ev)
				}
				t.Fatal("want an error, got an empty stream")
				return nil
			}

			err := firstError(tr.SubscribeToTask(ctx, nil, &a2a.SubscribeToTaskRequest{ID: "nope"}))
			if !errors.Is(err, a2a.ErrTaskNotFound) {
				t.Errorf("SubscribeToTask of an unknown task: want task not found (-32001), got %v", err)
			}

			bad := &a2a.SendMessageRequest{Message: &a2a.Message{Role: a2a.MessageRoleUser, Parts: []*a2a.Part{a2a.NewTextPart("hi")}}}
			err = firstError(tr.SendStreamingMessage(ctx, nil, bad))
			if !errors.Is(err, a2a.ErrInvalidParams) {
				t.Errorf("SendStreamingMessage without a messageId: want invalid params (-32602), got %v", err)
			}
		})
	}
}
