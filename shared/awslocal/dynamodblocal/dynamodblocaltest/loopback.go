package dynamodblocaltest

import (
	"context"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
)

// LoopbackURL serves DynamoDB Local on this machine's loopback for the rest of test t, and
// returns its URL: for code that reaches DynamoDB by an endpoint in its environment
// (AWS_ENDPOINT_URL_DYNAMODB) rather than through Config. Each connection to it is forwarded into
// the server's namespace.
func LoopbackURL(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("dynamodblocaltest: listen on loopback: %v", err)
	}
	f := &forwarder{conns: map[net.Conn]bool{}}
	go f.serve(l)
	t.Cleanup(func() {
		l.Close()
		f.closeAll()
	})
	return "http://" + l.Addr().String()
}

// forwarder copies connections accepted on loopback to and from DynamoDB Local.
type forwarder struct {
	mu     sync.Mutex
	conns  map[net.Conn]bool
	closed bool
}

func (f *forwarder) serve(l net.Listener) {
	for {
		c, err := l.Accept()
		if err != nil {
			return // closed by the test's cleanup
		}
		go f.forward(c)
	}
}

// forward joins c to a new connection into the server's namespace until either side ends.
func (f *forwarder) forward(c net.Conn) {
	up, err := server.DialContext(context.Background(), "tcp", strings.TrimPrefix(server.Endpoint, "http://"))
	if err != nil {
		c.Close()
		return
	}
	if !f.track(c, up) {
		return
	}
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, up); done <- struct{}{} }()
	<-done
	f.untrack(c, up)
}

// track records the pair, or closes it when the forwarder is closed already.
func (f *forwarder) track(pair ...net.Conn) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range pair {
		if f.closed {
			c.Close()
		} else {
			f.conns[c] = true
		}
	}
	return !f.closed
}

func (f *forwarder) untrack(pair ...net.Conn) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range pair {
		c.Close()
		delete(f.conns, c)
	}
}

func (f *forwarder) closeAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	for c := range f.conns {
		c.Close()
	}
}
