// Command agent is the interop backend built with a2a-go v2's own server
// (a2asrv: NewHandler with its in-memory task store, the in-memory push
// config store and HTTPPushSender, NewJSONRPCHandler), speaking 1.0 and
// running the script of interop/agents/script.mjs like the JS backends.
// Card at /.well-known/agent-card.json, JSON-RPC at /.
//
// It prints the same readiness line as interop/agents/serve.mjs
// ({"msg":"listening","addr":...}) for run.sh to wait on.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/a2aproject/a2a-go/v2/a2asrv/push"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "agent:", err)
		os.Exit(1)
	}
}

func run() error {
	host := flag.String("host", "127.0.0.1", "address to listen on")
	port := flag.Int("port", 0, "port to listen on (0: any free port)")
	flag.Parse()

	listener, err := net.Listen("tcp", net.JoinHostPort(*host, fmt.Sprint(*port)))
	if err != nil {
		return err
	}
	addr := listener.Addr().String()
	url := "http://" + addr + "/"

	capabilities := a2a.AgentCapabilities{Streaming: true, PushNotifications: true}
	card := &a2a.AgentCard{
		Name:                "interop-agent-go-2.3.1",
		Description:         "Scripted interop agent served by a2a-go v2 (a2asrv)",
		SupportedInterfaces: []*a2a.AgentInterface{a2a.NewAgentInterface(url, a2a.TransportProtocolJSONRPC)},
		Version:             "1.0.0",
		Capabilities:        capabilities,
		DefaultInputModes:   []string{"text/plain", "application/json"},
		DefaultOutputModes:  []string{"text/plain", "application/json"},
		Skills: []a2a.AgentSkill{{
			ID: "script", Name: "Scripted replies", Description: "Deterministic interop script", Tags: []string{"interop"},
		}},
	}
	// The interop agents authenticate nobody (the JS ones use
	// UserBuilder.noAuthentication); a2asrv's default store refuses
	// ListTasks without a user, so every caller is one anonymous owner.
	tasks := taskstore.NewInMemory(&taskstore.InMemoryStoreConfig{
		Authenticator: func(context.Context) (string, error) { return "anonymous", nil },
	})
	handler := a2asrv.NewHandler(executor{},
		a2asrv.WithTaskStore(tasks),
		a2asrv.WithCapabilityChecks(&capabilities),
		a2asrv.WithPushNotifications(push.NewInMemoryStore(), push.NewHTTPPushSender(&push.HTTPSenderConfig{Timeout: 5 * time.Second})),
		a2asrv.WithLogger(slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))),
	)
	mux := http.NewServeMux()
	mux.Handle(a2asrv.WellKnownAgentCardPath, a2asrv.NewStaticAgentCardHandler(card))
	mux.Handle("/", a2asrv.NewJSONRPCHandler(handler))
	server := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}

	ready, err := json.Marshal(map[string]string{"msg": "listening", "addr": addr, "url": url})
	if err != nil {
		return err
	}
	fmt.Println(string(ready))

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = server.Shutdown(shutdown)
	}()
	if err := server.Serve(listener); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
