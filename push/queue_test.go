package push

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"
)

// guard bounds a wait that only a bug makes long.
const guard = 10 * time.Second

func testQueue(t *testing.T, edit func(*Config)) (*Queue, *recorder) {
	t.Helper()
	s, _ := testSender(t, loopbackPolicy(), edit)
	var c Config
	c.SetDefaults()
	if edit != nil {
		edit(&c)
	}
	rec := &recorder{}
	return NewQueue(&c, s, rec.observer()), rec
}

// gate holds each request until the test lets it go.
type gate struct {
	arrived chan string
	release chan struct{}
}

// serveGate returns a gate and the URL of a loopback receiver it holds,
// closed at cleanup.
func serveGate(t *testing.T) (*gate, string) {
	g := &gate{arrived: make(chan string, 100), release: make(chan struct{})}
	srv := httptest.NewServer(http.HandlerFunc(g.handler))
	t.Cleanup(srv.Close)
	return g, srv.URL
}

func (g *gate) handler(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	g.arrived <- string(b)
	select {
	case <-g.release:
	case <-r.Context().Done():
		return
	}
}

func wait[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(guard):
		t.Fatal("timed out")
		panic("unreachable")
	}
}

// TestQueueOrdersEachTask: many tasks with several deliveries each, a
// receiver that answers in a random order and fails at random: each task's
// deliveries arrive in order, one at a time, every one of them.
func TestQueueOrdersEachTask(t *testing.T) {
	const tasks, perTask = 24, 6
	type req struct {
		task    string
		seq     int
		release chan int // the status to answer
	}
	arrive := make(chan req)
	stop := make(chan struct{})
	defer close(stop)
	// The scheduler releases whatever requests are pending in a random
	// order, so that tasks overtake each other; a third of the answers
	// are 503, so that retries happen.
	go func() {
		rnd := rand.New(rand.NewPCG(1, 2))
		var pending []req
		for {
			if len(pending) == 0 {
				select {
				case r := <-arrive:
					pending = append(pending, r)
				case <-stop:
					return
				}
				continue
			}
			select {
			case r := <-arrive:
				pending = append(pending, r)
				continue
			case <-stop:
				return
			default:
			}
			i := rnd.IntN(len(pending))
			code := 200
			if rnd.IntN(3) == 0 {
				code = 503
			}
			pending[i].release <- code
			pending = append(pending[:i], pending[i+1:]...)
		}
	}()
	var mu sync.Mutex
	got := map[string][]int{}
	inFlight := map[string]int{}
	var overlap []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		task := r.Header.Get("X-Task")
		seq, _ := strconv.Atoi(r.Header.Get("X-Seq"))
		mu.Lock()
		inFlight[task]++
		if inFlight[task] > 1 {
			overlap = append(overlap, task)
		}
		mu.Unlock()
		rel := make(chan int)
		arrive <- req{task, seq, rel}
		code := <-rel
		mu.Lock()
		inFlight[task]--
		if code == 200 {
			got[task] = append(got[task], seq)
		}
		mu.Unlock()
		w.WriteHeader(code)
	}))
	defer srv.Close()

	q, rec := testQueue(t, func(c *Config) { c.Workers = 6; c.MaxAttempts = 50 })
	for seq := range perTask {
		for i := range tasks {
			task := fmt.Sprintf("task-%d", i)
			h := http.Header{"X-Task": {task}, "X-Seq": {strconv.Itoa(seq)}}
			if err := q.Enqueue(Delivery{TaskID: task, URL: srv.URL, Header: h}); err != nil {
				t.Fatal(err)
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	if n, err := q.Close(ctx); n != 0 || err != nil {
		t.Fatalf("Close: %d abandoned, %v", n, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(overlap) > 0 {
		t.Errorf("deliveries of one task overlapped: %v", overlap)
	}
	for i := range tasks {
		task := fmt.Sprintf("task-%d", i)
		want := []int{0, 1, 2, 3, 4, 5}
		if fmt.Sprint(got[task]) != fmt.Sprint(want) {
			t.Errorf("%s received %v, want %v", task, got[task], want)
		}
	}
	if n := rec.count(Delivered); n != tasks*perTask {
		t.Errorf("%d delivered, want %d", n, tasks*perTask)
	}
	retried := 0
	for _, a := range rec.attempts {
		if a.Status == 503 {
			retried++
		}
	}
	if retried == 0 {
		t.Error("no attempt was retried: the test did not exercise retries")
	}
	if q.Len() != 0 {
		t.Errorf("Len after Close = %d", q.Len())
	}
}

// TestQueueTasksGoOutConcurrently: a task whose receiver hangs does not hold
// another task back.
func TestQueueTasksGoOutConcurrently(t *testing.T) {
	g, hook := serveGate(t)
	q, _ := testQueue(t, func(c *Config) { c.Workers = 2 })
	q.Enqueue(Delivery{TaskID: "a", URL: hook, Body: []byte("a1")})
	q.Enqueue(Delivery{TaskID: "a", URL: hook, Body: []byte("a2")})
	q.Enqueue(Delivery{TaskID: "b", URL: hook, Body: []byte("b1")})
	first, second := wait(t, g.arrived), wait(t, g.arrived)
	if !(first == "a1" && second == "b1" || first == "b1" && second == "a1") {
		t.Fatalf("in flight together: %q and %q, want a1 and b1", first, second)
	}
	close(g.release)
	if got := wait(t, g.arrived); got != "a2" {
		t.Fatalf("then %q, want a2", got)
	}
	if n, err := q.Close(context.Background()); n != 0 || err != nil {
		t.Fatalf("Close: %d, %v", n, err)
	}
}

// TestQueueEnqueueAllWholeOrNone: a fan-out the queue has no room for in
// whole queues none of its deliveries (each observed as dropped), one that
// fits queues all, and one larger than the queue goes into an empty queue.
func TestQueueEnqueueAllWholeOrNone(t *testing.T) {
	g, hook := serveGate(t)
	q, rec := testQueue(t, func(c *Config) { c.Workers = 1; c.QueueSize = 3 })
	fanOut := func(body string, n int) []Delivery {
		ds := make([]Delivery, n)
		for i := range ds {
			ds[i] = Delivery{TaskID: "t", URL: hook + "/hook" + strconv.Itoa(i), Body: []byte(body)}
		}
		return ds
	}
	if err := q.EnqueueAll(fanOut("first", 1)); err != nil {
		t.Fatal(err)
	}
	wait(t, g.arrived) // one in flight
	if err := q.EnqueueAll(fanOut("refused", 3)); !errors.Is(err, ErrQueueFull) {
		t.Fatalf("EnqueueAll of 3 into a queue with room for 2: %v, want ErrQueueFull", err)
	}
	if q.Len() != 1 || rec.count(DroppedQueueFull) != 3 {
		t.Fatalf("after the refused fan-out: Len %d, dropped %d; want 1, 3", q.Len(), rec.count(DroppedQueueFull))
	}
	if err := q.EnqueueAll(fanOut("fits", 2)); err != nil {
		t.Fatalf("EnqueueAll of 2 into a queue with room for 2: %v", err)
	}
	close(g.release)
	for range 2 {
		if got := wait(t, g.arrived); got != "fits" {
			t.Fatalf("%q sent, want the fan-out that fitted", got)
		}
	}
	if n, err := q.Close(context.Background()); n != 0 || err != nil {
		t.Fatalf("Close: %d, %v", n, err)
	}

	big, rec := testQueue(t, func(c *Config) { c.Workers = 1; c.QueueSize = 2 })
	if err := big.EnqueueAll(fanOut("big", 5)); err != nil {
		t.Fatalf("EnqueueAll of 5 into an empty queue of 2: %v, want it taken whole", err)
	}
	for range 5 {
		wait(t, g.arrived)
	}
	if n, err := big.Close(context.Background()); n != 0 || err != nil || rec.count(Delivered) != 5 {
		t.Fatalf("Close: %d, %v; delivered %d, want 5", n, err, rec.count(Delivered))
	}
}

func TestQueueFull(t *testing.T) {
	g, hook := serveGate(t)
	q, rec := testQueue(t, func(c *Config) { c.Workers = 1; c.QueueSize = 2 })
	if err := q.Enqueue(Delivery{TaskID: "a", URL: hook}); err != nil {
		t.Fatal(err)
	}
	wait(t, g.arrived) // one in flight
	if err := q.Enqueue(Delivery{TaskID: "b", URL: hook}); err != nil {
		t.Fatal(err)
	}
	if err := q.Enqueue(Delivery{TaskID: "c", URL: hook}); !errors.Is(err, ErrQueueFull) {
		t.Fatalf("third Enqueue: %v, want ErrQueueFull", err)
	}
	if q.Len() != 2 || rec.count(DroppedQueueFull) != 1 {
		t.Errorf("Len %d, dropped %d", q.Len(), rec.count(DroppedQueueFull))
	}
	close(g.release)
	if n, err := q.Close(context.Background()); n != 0 || err != nil {
		t.Fatalf("Close: %d, %v", n, err)
	}
	if rec.count(Delivered) != 2 {
		t.Errorf("delivered %d, want 2", rec.count(Delivered))
	}
}

// TestQueueFullByBytes: the queue is bounded by its bodies' bytes as well
// as by their count, so that a backend's large deliveries cannot hold
// queue_size times max_body_bytes; a body the bound refused fits once the
// bytes ahead of it went out.
func TestQueueFullByBytes(t *testing.T) {
	g, hook := serveGate(t)
	q, rec := testQueue(t, func(c *Config) { c.Workers = 1; c.QueueSize = 100; c.QueueBytes = 10; c.MaxBodyBytes = 10 })
	body := func(n int) []byte { return make([]byte, n) }
	if err := q.Enqueue(Delivery{TaskID: "a", URL: hook, Body: body(6)}); err != nil {
		t.Fatal(err)
	}
	wait(t, g.arrived) // in flight, its bytes still held
	if err := q.Enqueue(Delivery{TaskID: "b", URL: hook, Body: body(4)}); err != nil {
		t.Fatalf("Enqueue to exactly queue_bytes: %v", err)
	}
	if err := q.Enqueue(Delivery{TaskID: "c", URL: hook, Body: body(1)}); !errors.Is(err, ErrQueueFull) {
		t.Fatalf("Enqueue past queue_bytes: %v, want ErrQueueFull", err)
	}
	if q.Len() != 2 || rec.count(DroppedQueueFull) != 1 {
		t.Fatalf("Len %d, dropped %d; want 2, 1", q.Len(), rec.count(DroppedQueueFull))
	}
	g.release <- struct{}{}
	wait(t, g.arrived) // a went out; b in flight
	if err := q.Enqueue(Delivery{TaskID: "c", URL: hook, Body: body(6)}); err != nil {
		t.Fatalf("Enqueue once the bytes ahead went out: %v", err)
	}
	close(g.release)
	if n, err := q.Close(context.Background()); n != 0 || err != nil {
		t.Fatalf("Close: %d, %v", n, err)
	}
	if rec.count(Delivered) != 3 {
		t.Errorf("delivered %d, want 3", rec.count(Delivered))
	}
}

func TestQueueCloseDrains(t *testing.T) {
	g, hook := serveGate(t)
	q, rec := testQueue(t, func(c *Config) { c.Workers = 2 })
	for i := range 3 {
		q.Enqueue(Delivery{TaskID: "a", URL: hook, Body: []byte(strconv.Itoa(i))})
	}
	wait(t, g.arrived)
	closed := make(chan int)
	go func() {
		n, _ := q.Close(context.Background())
		closed <- n
	}()
	close(g.release)
	if n := wait(t, closed); n != 0 {
		t.Fatalf("Close abandoned %d", n)
	}
	for _, want := range []string{"1", "2"} {
		if got := wait(t, g.arrived); got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
	if rec.count(Delivered) != 3 {
		t.Errorf("delivered %d, want 3", rec.count(Delivered))
	}
	if err := q.Enqueue(Delivery{TaskID: "a", URL: hook}); !errors.Is(err, ErrClosed) {
		t.Errorf("Enqueue after Close: %v, want ErrClosed", err)
	}
	if rec.count(AbandonedShutdown) != 1 {
		t.Errorf("the refused Enqueue was not observed")
	}
}

// TestQueueCloseDeadline: when the drain deadline passes, the delivery in
// flight is cancelled and the queued ones dropped, all counted.
func TestQueueCloseDeadline(t *testing.T) {
	g, hook := serveGate(t) // never released: the receiver hangs
	q, rec := testQueue(t, func(c *Config) { c.Workers = 1 })
	for i := range 3 {
		q.Enqueue(Delivery{TaskID: "a", URL: hook, Body: []byte(strconv.Itoa(i))})
	}
	q.Enqueue(Delivery{TaskID: "b", URL: hook})
	q.Enqueue(Delivery{TaskID: "c", URL: hook})
	wait(t, g.arrived)
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the shutdown timeout has passed
	n, err := q.Close(ctx)
	if n != 5 || !errors.Is(err, context.Canceled) {
		t.Fatalf("Close: %d abandoned, %v; want 5, context.Canceled", n, err)
	}
	if rec.count(AbandonedShutdown) != 5 || len(rec.outcomes) != 5 {
		t.Errorf("outcomes %+v", rec.outcomes)
	}
	if q.Len() != 0 {
		t.Errorf("Len after Close = %d", q.Len())
	}
}

func TestQueueObservesPolicyRefusal(t *testing.T) {
	q, rec := testQueue(t, nil)
	q.Enqueue(Delivery{TaskID: "a", URL: "http://10.0.0.5/hook"})
	if n, err := q.Close(context.Background()); n != 0 || err != nil {
		t.Fatalf("Close: %d, %v", n, err)
	}
	if rec.count(RefusedPolicy) != 1 {
		t.Errorf("outcomes %+v", rec.outcomes)
	}
}

// TestQueueBoundsOneTask: one task's deliveries to one URL take at most
// queue_size/workers places (and queue_bytes/workers bytes, at least a
// delivery's max_body_bytes): past that the task's next delivery is
// refused while another task's is taken. They go out one at a time, so a
// slow receiver drains them slowly; before, one task could fill the whole
// queue and have every other task's deliveries refused meanwhile.
func TestQueueBoundsOneTask(t *testing.T) {
	g, hook := serveGate(t)
	q, rec := testQueue(t, func(c *Config) { c.Workers = 2; c.QueueSize = 6; c.QueueBytes = 100; c.MaxBodyBytes = 20 })
	for i := range 3 {
		if err := q.Enqueue(Delivery{TaskID: "a", URL: hook, Body: []byte(strconv.Itoa(i))}); err != nil {
			t.Fatalf("task a's delivery %d: %v", i, err)
		}
	}
	wait(t, g.arrived) // a's first in flight
	if err := q.Enqueue(Delivery{TaskID: "a", URL: hook, Body: []byte("3")}); !errors.Is(err, ErrQueueFull) {
		t.Fatalf("task a's fourth delivery into a queue of 6 with 2 workers: %v, want ErrQueueFull", err)
	}
	if err := q.Enqueue(Delivery{TaskID: "b", URL: hook, Body: []byte("b")}); err != nil {
		t.Fatalf("task b's delivery beside a's three: %v", err)
	}
	close(g.release)
	if n, err := q.Close(context.Background()); n != 0 || err != nil {
		t.Fatalf("Close: %d, %v", n, err)
	}
	if rec.count(Delivered) != 4 || rec.count(DroppedQueueFull) != 1 {
		t.Errorf("delivered %d, dropped %d; want 4, 1", rec.count(Delivered), rec.count(DroppedQueueFull))
	}

	g, hook = serveGate(t)
	q, _ = testQueue(t, func(c *Config) { c.Workers = 2; c.QueueSize = 100; c.QueueBytes = 100; c.MaxBodyBytes = 20 })
	for range 2 {
		if err := q.Enqueue(Delivery{TaskID: "c", URL: hook, Body: make([]byte, 20)}); err != nil {
			t.Fatalf("task c's 40 bytes, within queue_bytes/workers (50): %v", err)
		}
	}
	if err := q.Enqueue(Delivery{TaskID: "c", URL: hook, Body: make([]byte, 11)}); !errors.Is(err, ErrQueueFull) {
		t.Fatalf("task c past queue_bytes/workers: %v, want ErrQueueFull", err)
	}
	if err := q.Enqueue(Delivery{TaskID: "d", URL: hook, Body: make([]byte, 11)}); err != nil {
		t.Fatalf("task d beside c: %v", err)
	}
	close(g.release)
	if n, err := q.Close(context.Background()); n != 0 || err != nil {
		t.Fatalf("Close: %d, %v", n, err)
	}
}

// TestQueueLaneHoldsTwoWhenQueueIsUnderTwiceWorkers: with queue_size under
// twice workers, queue_size/workers is 1 (0 rounded up): a task's lane held
// only the delivery in flight, so every next delivery of the task (a
// status after a status) was refused while it was being sent, with room
// in the queue. A lane holds at least 2, and no more than its bound.
func TestQueueLaneHoldsTwoWhenQueueIsUnderTwiceWorkers(t *testing.T) {
	g, hook := serveGate(t)
	q, rec := testQueue(t, func(c *Config) { c.Workers = 8; c.QueueSize = 10 })
	d := func(body string) Delivery { return Delivery{TaskID: "t", URL: hook, Body: []byte(body)} }
	if err := q.Enqueue(d("working")); err != nil {
		t.Fatal(err)
	}
	wait(t, g.arrived) // in flight
	if err := q.Enqueue(d("completed")); err != nil {
		t.Fatalf("the task's next delivery, with the queue holding 1 of 10: %v", err)
	}
	if err := q.Enqueue(d("third")); !errors.Is(err, ErrQueueFull) {
		t.Fatalf("a third delivery in the task's lane of 2: %v, want ErrQueueFull", err)
	}
	close(g.release)
	if got := wait(t, g.arrived); got != "completed" {
		t.Fatalf("then %q, want completed", got)
	}
	if n, err := q.Close(context.Background()); n != 0 || err != nil || rec.count(Delivered) != 2 {
		t.Fatalf("Close: %d, %v; delivered %d, want 2", n, err, rec.count(Delivered))
	}
}
