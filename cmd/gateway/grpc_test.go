package main

import (
	"context"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// TestGRPCOnTrafficListener: the binary's traffic listener speaks gRPC
// (h2c prior knowledge, as grpc-go clients dial) next to HTTP/1.1 JSON-RPC,
// to the official a2a-go v2 gRPC client, in front of the 0.2.5 agent.
func TestGRPCOnTrafficListener(t *testing.T) {
	backend := startLegacyBackend(t)
	g := startGateway(t, gatewayConfig(backend.URL+"/", "Helpdesk"))

	addr := strings.TrimPrefix(g.url, "http://")
	client, err := a2aclient.NewFromEndpoints(context.Background(),
		[]*a2a.AgentInterface{a2a.NewAgentInterface(addr, a2a.TransportProtocolGRPC)},
		a2agrpc.WithGRPCTransport(grpc.WithTransportCredentials(insecure.NewCredentials())))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Destroy()
	res, err := client.SendMessage(context.Background(), &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hello"))})
	if err != nil {
		t.Fatal(err)
	}
	task, ok := res.(*a2a.Task)
	if !ok || task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("send over gRPC: %#v", res)
	}
	if status, body := httpGet(t, g.url+"/.well-known/agent.json"); status != 200 || !strings.Contains(body, "Helpdesk") {
		t.Fatalf("HTTP/1.1 beside gRPC: %d %s", status, body)
	}
}
