package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/a2agate/gateway/configs"
	"github.com/a2agate/gateway/legacyagent"
)

// demo starts the bundled A2A 0.2.5 legacy agent on a loopback port and the
// gateway in front of it, from the embedded demo config.
func demo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:8080", "the gateway's address")
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	agent := legacyagent.New(legacyagent.Options{StepDelay: 300 * time.Millisecond})
	defer agent.Close()
	backend := &http.Server{Handler: agent, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = backend.Serve(ln) }()
	defer backend.Close()

	raw, err := configs.FS.ReadFile(configs.Demo)
	if err != nil {
		return err
	}
	os.Setenv("A2AGW_DEMO_LISTEN", *listen)
	os.Setenv("A2AGW_DEMO_PUBLIC_URL", "http://"+advertised(*listen)+"/")
	os.Setenv("A2AGW_DEMO_BACKEND_URL", "http://"+ln.Addr().String()+"/")
	cfg, err := parseConfig(raw)
	if err != nil {
		return err
	}
	return serve(ctx, cfg, "", stderr, func(addr, _ string) { printDemoUsage(stdout, advertised(addr)) })
}

func printDemoUsage(w io.Writer, addr string) {
	fmt.Fprintf(w, `
A2A gateway on http://%[1]s/ in front of the bundled A2A 0.2.5 legacy agent.

Agent cards:
  curl -s http://%[1]s/.well-known/agent.json        # 0.2.5 card
  curl -s http://%[1]s/.well-known/agent-card.json   # 0.3 + 1.0 card

Call it in the 0.x dialect:
  curl -s http://%[1]s/ -H 'Content-Type: application/json' -d '{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"text","text":"summarise the ticket"}]}}}'

Call it in the 1.0 dialect (the backend still speaks 0.2.5):
  curl -s http://%[1]s/ -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' -d '{"jsonrpc":"2.0","id":2,"method":"SendMessage","params":{"message":{"messageId":"m2","role":"ROLE_USER","parts":[{"text":"what is A2A?"}]}}}'

Stream it (1.0):
  curl -sN http://%[1]s/ -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' -d '{"jsonrpc":"2.0","id":3,"method":"SendStreamingMessage","params":{"message":{"messageId":"m3","role":"ROLE_USER","parts":[{"text":"run the report"}]}}}'

Push notifications, in your dialect whatever the backend's (the demo allows receivers on loopback):
  python3 -c "import http.server as s; s.HTTPServer(('127.0.0.1',9000), type('H',(s.BaseHTTPRequestHandler,),{'do_POST': lambda h: (print(h.rfile.read(int(h.headers['Content-Length'])).decode(), flush=True), h.send_response(200), h.end_headers())})).serve_forever()" &
  curl -s http://%[1]s/ -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' -d '{"jsonrpc":"2.0","id":4,"method":"SendMessage","params":{"message":{"messageId":"m4","role":"ROLE_USER","parts":[{"text":"run the report"}]},"configuration":{"returnImmediately":true,"taskPushNotificationConfig":{"url":"http://127.0.0.1:9000/hook","token":"my-token"}}}}'

Messages ending in "?" get a direct answer; "input ..." asks for more input; "wait" runs until canceled; "fail" fails.
Ctrl-C stops it.
`, addr)
}
