// Package tcptest gives tests loopback TCP addresses: one that serves each connection with a
// function, and one where nothing listens.
package tcptest

import (
	"net"
	"sync"
	"testing"
)

// Serve listens on a free port of 127.0.0.1 until the test ends and returns its address. Each
// connection is passed to handle (nil: left open, a server that never answers) in the accepting
// goroutine; whatever handle leaves open is closed when the test ends.
func Serve(t testing.TB, handle func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("tcptest: listen: %v", err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
	)
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			if handle != nil {
				handle(c)
			}
		}
	}()
	return ln.Addr().String()
}

// ClosedAddr returns an address of 127.0.0.1 where nothing listens: a port that was free a
// moment ago, whose listener is closed.
func ClosedAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("tcptest: listen: %v", err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatalf("tcptest: close: %v", err)
	}
	return addr
}
