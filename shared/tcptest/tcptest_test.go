package tcptest

import (
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// TestServe: each connection gets what handle writes; without handle it stays open and silent.
func TestServe(t *testing.T) {
	for _, tc := range []struct {
		name    string
		handle  func(net.Conn)
		want    string
		timeout bool
	}{
		{"answers", func(c net.Conn) { _, _ = c.Write([]byte("hello")); _ = c.Close() }, "hello", false},
		{"silent", nil, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := net.Dial("tcp", Serve(t, tc.handle))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_ = c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
			got, err := io.ReadAll(c)
			var ne net.Error
			if timedOut := err != nil && errors.As(err, &ne) && ne.Timeout(); timedOut != tc.timeout || string(got) != tc.want {
				t.Fatalf("read %q, %v; want %q, timeout %v", got, err, tc.want, tc.timeout)
			}
		})
	}
}

// TestClosedAddr: nothing answers at the address.
func TestClosedAddr(t *testing.T) {
	if c, err := net.Dial("tcp", ClosedAddr(t)); err == nil {
		c.Close()
		t.Fatal("a connection to ClosedAddr succeeded")
	}
}
