package main

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strings"
	"time"
)

// wakeupCommand measures what a wake-up costs on this machine, the floor
// under every proxied stream event: `loadbench wakeup` runs a receiver and
// a sender as two processes, pinned as the benchmark pins a proxy and its
// backend, and the sender writes an 8-byte stamp over loopback TCP every
// interval. The receiver, blocked in a read between stamps, reports how
// long after its stamp each one was read. A proxied event takes two such
// hops across CPUs that an event read directly does not.
func wakeupCommand(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("wakeup", stderr)
	interval := fs.Duration("interval", 100*time.Microsecond, "pause between stamps")
	count := fs.Int("count", 20000, "stamps sent")
	if err := fs.Parse(args); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	pin, err := decidePin("auto")
	if err != nil {
		return err
	}
	pairs := [][2]string{{"", ""}} // receiver's and sender's CPUs
	if pin {
		pairs = [][2]string{{"0", "1"}, {"1", "1"}}
	}
	fmt.Fprintf(stdout, "%d stamps of 8 bytes over loopback TCP, one every %s, each read by a receiver blocked in read:\n", *count, *interval)
	for _, cpus := range pairs {
		lat, err := wakeupPair(self, cpus, *interval, *count)
		if err != nil {
			return err
		}
		where := "unpinned"
		if cpus[0] != "" {
			where = fmt.Sprintf("receiver on CPU %s, sender on CPU %s", cpus[0], cpus[1])
		}
		fmt.Fprintf(stdout, "  %-36s p50 %5.0f µs  p90 %5.0f µs  p99 %5.0f µs  p99.9 %6.0f µs\n",
			where, micros(lat.quantile(0.5)), micros(lat.quantile(0.9)), micros(lat.quantile(0.99)), micros(lat.quantile(0.999)))
	}
	return nil
}

// wakeupPair runs one receiver and one sender on the given CPUs and
// returns the receiver's latencies.
func wakeupPair(self string, cpus [2]string, interval time.Duration, count int) (latencies, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	var out strings.Builder
	recv, err := startProcess("wakeup receiver", cpus[0], []string{self, "wakeup-peer", "-receive", addr}, nil, &out)
	if err != nil {
		return nil, err
	}
	defer recv.stop()
	var sendOut strings.Builder
	send, err := startProcess("wakeup sender", cpus[1], []string{self, "wakeup-peer", "-send", addr,
		"-interval", interval.String(), "-count", fmt.Sprint(count)}, nil, &sendOut)
	if err != nil {
		return nil, err
	}
	<-send.done
	if send.err != nil {
		return nil, fmt.Errorf("wakeup sender: %v: %s", send.err, sendOut.String())
	}
	<-recv.done
	if recv.err != nil {
		return nil, fmt.Errorf("wakeup receiver: %v: %s", recv.err, out.String())
	}
	var lat latencies
	if err := json.Unmarshal([]byte(out.String()), &lat); err != nil {
		return nil, fmt.Errorf("wakeup receiver's answer: %v", err)
	}
	if len(lat) != count {
		return nil, fmt.Errorf("wakeup receiver read %d of %d stamps", len(lat), count)
	}
	slices.Sort(lat)
	return lat, nil
}

// wakeupPeer is one side of `loadbench wakeup`, in its own process.
func wakeupPeer(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("wakeup-peer", stderr)
	receive := fs.String("receive", "", "listen here, read stamps until the sender closes, print their latencies (ns, JSON)")
	send := fs.String("send", "", "send stamps to this address")
	interval := fs.Duration("interval", 100*time.Microsecond, "pause between stamps")
	count := fs.Int("count", 20000, "stamps sent")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case *receive != "":
		ln, err := net.Listen("tcp", *receive)
		if err != nil {
			return err
		}
		lat, err := receiveStamps(ln)
		if err != nil {
			return err
		}
		return json.NewEncoder(stdout).Encode(lat)
	case *send != "":
		return sendStamps(*send, *interval, *count)
	}
	return errors.New("wakeup-peer: -receive or -send")
}

// receiveStamps accepts one connection and reads stamps from it until it
// closes, returning how long after its stamp each was read.
func receiveStamps(ln net.Listener) ([]int64, error) {
	defer ln.Close()
	c, err := ln.Accept()
	if err != nil {
		return nil, err
	}
	defer c.Close()
	var lat []int64
	var stamp [8]byte
	for {
		if _, err := io.ReadFull(c, stamp[:]); err != nil {
			if errors.Is(err, io.EOF) {
				return lat, nil
			}
			return nil, err
		}
		lat = append(lat, time.Now().UnixNano()-int64(binary.LittleEndian.Uint64(stamp[:])))
	}
}

// sendStamps writes count stamps to addr, one every interval on a fixed
// schedule, dialing until the receiver listens.
func sendStamps(addr string, interval time.Duration, count int) error {
	var c net.Conn
	var err error
	for deadline := time.Now().Add(10 * time.Second); ; {
		if c, err = net.Dial("tcp", addr); err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil {
		return err
	}
	defer c.Close()
	var stamp [8]byte
	start := time.Now()
	for i := range count {
		time.Sleep(time.Until(start.Add(time.Duration(i) * interval)))
		binary.LittleEndian.PutUint64(stamp[:], uint64(time.Now().UnixNano()))
		if _, err := c.Write(stamp[:]); err != nil {
			return err
		}
	}
	return nil
}
