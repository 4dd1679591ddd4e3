package outbound

import (
	"context"
	"io"
	"net"
	"sync"
	"syscall"
)

// copyBufSize is the size of the pieces in which a request body is written to a plain (non-TLS)
// connection. net.TCPConn writes a body that is not a file in 32 KiB pieces; uploads of large
// artifacts spend their time in system calls, and bigger pieces halve them and more.
const copyBufSize = 256 << 10

var copyBufs = sync.Pool{New: func() any { b := make([]byte, copyBufSize); return &b }}

// bigWriteConn is a TCP connection whose ReadFrom (used by http.Transport to write request
// bodies) copies in copyBufSize pieces, unless the source is a file or socket that the kernel can
// copy from directly (sendfile, splice).
type bigWriteConn struct {
	*net.TCPConn
}

func (c bigWriteConn) ReadFrom(r io.Reader) (int64, error) {
	src := r
	if lr, ok := r.(*io.LimitedReader); ok {
		src = lr.R
	}
	if _, ok := src.(syscall.Conn); ok {
		return c.TCPConn.ReadFrom(r)
	}
	buf := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(buf)
	return io.CopyBuffer(writerOnly{c.TCPConn}, r, *buf)
}

// writerOnly hides the connection's ReadFrom from io.CopyBuffer.
type writerOnly struct{ io.Writer }

// dialBigWrites dials with d and wraps TCP connections in bigWriteConn.
func dialBigWrites(d *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if tc, ok := c.(*net.TCPConn); ok && err == nil {
			return bigWriteConn{tc}, nil
		}
		return c, err
	}
}
