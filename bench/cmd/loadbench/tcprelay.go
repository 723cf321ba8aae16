package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
)

// serveTCPRelay runs the least a proxy can be: `loadbench tcprelay -listen
// ADDR -upstream HOST:PORT` dials the upstream for each connection and
// copies bytes both ways without looking at them: no HTTP, no parsing, no
// flushing policy. It makes, per stream event, the system calls every
// proxy here makes (a read that returns the event, one that finds nothing
// more, a write), so what it adds to an event over the backend read
// directly is what the machine charges any proxy on its own CPU: the floor
// under the other proxies' figures.
func serveTCPRelay(args []string, stderr io.Writer) error {
	listen, upstream, err := parseRelayFlags("tcprelay", args, stderr, "the backend's host:port")
	if err != nil {
		return err
	}
	if _, _, err := net.SplitHostPort(upstream); err != nil {
		return fmt.Errorf("tcprelay: -upstream %q is not host:port", upstream)
	}
	ctx, stop := signalContext()
	defer stop()
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	return relayTCP(ctx, ln, upstream)
}

// relayTCP relays every connection ln accepts to upstream until ctx ends.
func relayTCP(ctx context.Context, ln net.Listener, upstream string) error {
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	bufs := sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}
	for {
		down, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		go relayConn(down, upstream, &bufs)
	}
}

// relayConn copies between down and a fresh connection to upstream until
// either side closes.
func relayConn(down net.Conn, upstream string, bufs *sync.Pool) {
	defer down.Close()
	up, err := net.Dial("tcp", upstream)
	if err != nil {
		return
	}
	defer up.Close()
	done := make(chan struct{})
	go func() {
		copyBytes(up, down, bufs)
		up.(*net.TCPConn).CloseWrite()
		close(done)
	}()
	copyBytes(down, up, bufs)
	down.(*net.TCPConn).CloseWrite()
	<-done
}

// copyBytes copies with read and write, as the proxies measured beside it
// do: io.Copy between two TCP connections would splice(2) through a pipe.
func copyBytes(dst, src net.Conn, bufs *sync.Pool) {
	b := bufs.Get().(*[]byte)
	defer bufs.Put(b)
	for {
		n, err := src.Read(*b)
		if n > 0 {
			if _, werr := dst.Write((*b)[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				src.Close()
			}
			return
		}
	}
}
