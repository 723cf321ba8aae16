package grpctest

import (
	"errors"
	"io"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// stream answers its events, then ends with end.
type stream struct {
	grpc.ServerStreamingClient[int]
	events int
	end    error
}

func (s *stream) Recv() (*int, error) {
	if s.events == 0 {
		return nil, s.end
	}
	s.events--
	return &s.events, nil
}

func TestDrain(t *testing.T) {
	refused := status.Error(codes.PermissionDenied, "no")
	for _, tc := range []struct {
		name string
		s    *stream
		want error
	}{
		{"ended OK", &stream{events: 3, end: io.EOF}, nil},
		{"ended OK at once", &stream{end: io.EOF}, nil},
		{"ended with a status", &stream{events: 2, end: refused}, refused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := Drain[int](tc.s); !errors.Is(err, tc.want) {
				t.Fatalf("Drain = %v, want %v", err, tc.want)
			}
			if tc.s.events != 0 {
				t.Fatalf("%d events left unread", tc.s.events)
			}
		})
	}
}
