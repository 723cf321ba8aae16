package grpcbind

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"google.golang.org/grpc"
)

// countingStream is a grpc.ServerStream whose SendMsg counts the messages
// and the sends that overlap, which grpc-go forbids.
type countingStream struct {
	grpc.ServerStream
	sends, inSend, overlaps atomic.Int32
}

func (s *countingStream) Context() context.Context { return context.Background() }

func (s *countingStream) SendMsg(any) error {
	if s.inSend.Add(1) > 1 {
		s.overlaps.Add(1)
	}
	defer s.inSend.Add(-1)
	s.sends.Add(1)
	return nil
}

func (bs *boundedStream) senderRuns() bool {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	return bs.running
}

// TestSenderExitsWhenIdle: a bounded stream's sender exits once it has
// waited senderIdle (to twice that) for a message, so an idle open stream holds no
// goroutine for its sends, and the next message starts a sender again;
// messages that come more often keep the one sender; no two sends overlap.
func TestSenderExitsWhenIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cs := &countingStream{}
		bs := &boundedStream{ServerStream: cs, ctx: context.Background()}
		send := func() {
			t.Helper()
			bs.deadline = time.Now().Add(time.Minute)
			if err := bs.SendMsg("m"); err != nil {
				t.Fatal(err)
			}
		}
		for range 3 {
			send()
			time.Sleep(senderIdle / 2)
		}
		synctest.Wait()
		if !bs.senderRuns() {
			t.Fatal("the sender exited between messages less than senderIdle apart")
		}
		time.Sleep(2 * senderIdle)
		synctest.Wait()
		if bs.senderRuns() {
			t.Fatal("the sender still runs after twice senderIdle without a message")
		}
		send()
		if !bs.senderRuns() {
			t.Fatal("a message after the sender exited started no sender")
		}
		close(bs.next) // the handler's return, as boundSends does it
		synctest.Wait()
		if n, o := cs.sends.Load(), cs.overlaps.Load(); n != 4 || o != 0 {
			t.Fatalf("%d sends, %d overlapping: want 4, none", n, o)
		}
	})
}
