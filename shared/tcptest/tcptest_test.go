package tcptest

import (
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// read dials addr and reads until the server closes or 300 ms pass.
func read(t *testing.T, addr string) (string, error) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	got, err := io.ReadAll(c)
	return string(got), err
}

// TestServeAnswers: each connection gets what handle writes.
func TestServeAnswers(t *testing.T) {
	addr := Serve(t, func(c net.Conn) { _, _ = c.Write([]byte("hello")); _ = c.Close() })
	if got, err := read(t, addr); err != nil || got != "hello" {
		t.Fatalf("read %q, %v; want hello", got, err)
	}
}

// TestServeSilent: without handle a connection stays open and nothing is said.
func TestServeSilent(t *testing.T) {
	got, err := read(t, Serve(t, nil))
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() || got != "" {
		t.Fatalf("read %q, %v; want nothing until the deadline", got, err)
	}
}

// TestClosedAddr: nothing answers at the address.
func TestClosedAddr(t *testing.T) {
	if c, err := net.Dial("tcp", ClosedAddr(t)); err == nil {
		c.Close()
		t.Fatal("a connection to ClosedAddr succeeded")
	}
}
