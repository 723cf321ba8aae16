package grpcbind

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/metadata"

	"github.com/a2agate/gateway/internal/testnet"
)

// served serves New's server in front of c, configured by opts, on a
// loopback listener of its own (Serve, as grpc_listen does), and returns a
// connection to it.
func served(t *testing.T, c http.Handler, opts Options) *grpc.ClientConn {
	t.Helper()
	s := New(c, opts)
	t.Cleanup(s.Stop)
	ln := testnet.Listen(t)
	go func() { _ = s.Serve(ln) }()
	return dial(t, ln.Addr().String())
}

// dial is a plaintext connection to addr, closed when t ends.
func dial(t *testing.T, addr string) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// wireBytes is a request message sent as it is, whatever it holds.
type wireBytes []byte

// rawCodec sends wireBytes unchanged and reads any answer without decoding
// it, so that a test can put bytes on the wire that no proto.Marshal writes.
type rawCodec struct{}

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	b, ok := v.(wireBytes)
	if !ok {
		return nil, errors.New("rawCodec sends wireBytes only")
	}
	return mem.BufferSlice{mem.SliceBuffer(b)}, nil
}

func (rawCodec) Unmarshal(mem.BufferSlice, any) error { return nil }
func (rawCodec) Name() string                         { return "proto" }

// invokeRaw calls method with body as the request message's bytes.
func invokeRaw(conn *grpc.ClientConn, method string, stream bool, body wireBytes) error {
	return invokeRawHeader(context.Background(), conn, method, stream, body, nil)
}

// invokeRawHeader is invokeRaw within ctx, keeping the answer's header
// metadata in md when it is not nil.
func invokeRawHeader(ctx context.Context, conn *grpc.ClientConn, method string, stream bool, body wireBytes, md *metadata.MD) error {
	opts := []grpc.CallOption{grpc.ForceCodecV2(rawCodec{})}
	if !stream {
		if md != nil {
			opts = append(opts, grpc.Header(md))
		}
		return conn.Invoke(ctx, method, body, new(struct{}), opts...)
	}
	s, err := conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true}, method, opts...)
	if err != nil {
		return err
	}
	if err := s.SendMsg(body); err != nil {
		return err
	}
	if err := s.CloseSend(); err != nil {
		return err
	}
	for {
		if err := s.RecvMsg(new(struct{})); err != nil {
			if md != nil {
				*md, _ = s.Header()
			}
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
}
