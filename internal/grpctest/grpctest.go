// Package grpctest holds what tests of the gateway's gRPC binding do with
// its calls.
package grpctest

import (
	"errors"
	"io"

	"google.golang.org/grpc"
)

// Drain reads s to its end: nil when the server ended it with an OK
// status, else the error the stream ended with.
func Drain[T any](s grpc.ServerStreamingClient[T]) error {
	for {
		if _, err := s.Recv(); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}
