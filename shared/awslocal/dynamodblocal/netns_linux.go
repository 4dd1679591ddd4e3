package dynamodblocal

import (
	"context"
	"fmt"
	"net"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// netnsSupported: Linux has network namespaces.
const netnsSupported = true

// errNoNetns is never returned on Linux.
var errNoNetns error

// DialContext opens a connection inside the server's network namespace: the socket is made on an
// OS thread that entered the namespace, and keeps living there after the thread went back.
func (s *Server) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	type result struct {
		conn net.Conn
		err  error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		own, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			done <- result{err: err}
			return
		}
		defer own.Close()
		if err := unix.Setns(int(s.netns.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			done <- result{err: fmt.Errorf("dynamodblocal: enter the server's network namespace: %w", err)}
			return
		}
		var d net.Dialer
		conn, err := d.DialContext(ctx, network, addr)
		if unix.Setns(int(own.Fd()), unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread() // back home: the thread may serve other goroutines again
		} // else the thread stays locked and ends with this goroutine
		done <- result{conn, err}
	}()
	r := <-done
	return r.conn, r.err
}
