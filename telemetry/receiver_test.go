package telemetry

import (
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/stats"
	"google.golang.org/protobuf/proto"

	"github.com/a2agate/gateway/internal/testnet"
)

// receiver is an in-process OTLP collector: it keeps what it is sent.
type receiver struct {
	URL string // http://127.0.0.1:PORT, for http/protobuf
	mu  sync.Mutex
	got []*tracepb.ResourceSpans
	hdr []http.Header
	// grpcEncodings are the compressions of the gRPC exports.
	grpcEncodings []string
	// arrived is told of every export the receiver took.
	arrived chan struct{}
}

type receiverMode int

const (
	accept receiverMode = iota
	refuse              // answers 500
	hang                // never answers until the test ends
)

func newReceiver(t *testing.T, mode receiverMode) *receiver {
	t.Helper()
	rc := &receiver{arrived: make(chan struct{}, 1024)}
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch mode {
		case refuse:
			http.Error(w, "collector refuses", http.StatusInternalServerError)
			return
		case hang:
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
			http.Error(w, "want POST /v1/traces with protobuf", http.StatusNotFound)
			return
		}
		var body []byte
		var err error
		switch r.Header.Get("Content-Encoding") {
		case "":
			body, err = io.ReadAll(r.Body)
		case "gzip":
			body, err = gunzip(r.Body)
		default:
			http.Error(w, "unknown content encoding", http.StatusUnsupportedMediaType)
			return
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var req collectortrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		rc.keep(req.ResourceSpans, r.Header)
		out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	rc.URL = srv.URL
	return rc
}

func gunzip(r io.Reader) ([]byte, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}

func (rc *receiver) keep(rs []*tracepb.ResourceSpans, h http.Header) {
	rc.mu.Lock()
	rc.got = append(rc.got, rs...)
	rc.hdr = append(rc.hdr, h)
	rc.mu.Unlock()
	rc.arrived <- struct{}{}
}

// spans returns every span received, by name, with its resource's
// service.name.
func (rc *receiver) spans() (map[string]*tracepb.Span, []string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	byName := map[string]*tracepb.Span{}
	var services []string
	for _, rs := range rc.got {
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.Key == "service.name" {
				services = append(services, kv.GetValue().GetStringValue())
			}
		}
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				byName[s.Name] = s
			}
		}
	}
	return byName, services
}

func (rc *receiver) headers() []http.Header {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]http.Header(nil), rc.hdr...)
}

// grpcService takes OTLP exports over gRPC into a receiver.
type grpcService struct {
	collectortrace.UnimplementedTraceServiceServer
	rc *receiver
}

func (g grpcService) Export(ctx context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	h := http.Header{}
	for k, v := range md {
		h[http.CanonicalHeaderKey(k)] = v
	}
	g.rc.keep(req.ResourceSpans, h)
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

// encodingTap keeps the compression of every gRPC call a receiver takes.
type encodingTap struct{ rc *receiver }

func (e encodingTap) HandleRPC(_ context.Context, s stats.RPCStats) {
	if h, ok := s.(*stats.InHeader); ok {
		e.rc.mu.Lock()
		e.rc.grpcEncodings = append(e.rc.grpcEncodings, h.Compression)
		e.rc.mu.Unlock()
	}
}

func (encodingTap) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context   { return ctx }
func (encodingTap) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (encodingTap) HandleConn(context.Context, stats.ConnStats)                       {}

// newGRPCReceiver returns a receiver and its host:port, for grpc.
func newGRPCReceiver(t *testing.T) (*receiver, string) {
	t.Helper()
	ln := testnet.Listen(t)
	rc := &receiver{arrived: make(chan struct{}, 1024)}
	srv := grpc.NewServer(grpc.StatsHandler(encodingTap{rc}))
	collectortrace.RegisterTraceServiceServer(srv, grpcService{rc: rc})
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	return rc, ln.Addr().String()
}

// testCtx bounds a test's waits.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}
