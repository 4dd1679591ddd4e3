package websocket

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
)

// hijacker hands the WebSocket library the client's connection with a frameWatch reading along:
// the library reads whole messages, API Gateway's quota is on frames too.
type hijacker struct {
	http.ResponseWriter
	watch *frameWatch
}

func (h *hijacker) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	hj, ok := h.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("the response writer cannot be hijacked")
	}
	nc, brw, err := hj.Hijack()
	if err != nil {
		return nil, nil, err
	}
	// Bytes the server read ahead come first, through the watch as well.
	ahead, _ := brw.Reader.Peek(brw.Reader.Buffered())
	h.watch.r = io.MultiReader(bytes.NewReader(append([]byte(nil), ahead...)), nc)
	wc := &watchedConn{Conn: nc, watch: h.watch}
	return wc, bufio.NewReadWriter(bufio.NewReader(wc), brw.Writer), nil
}

type watchedConn struct {
	net.Conn
	watch *frameWatch
}

func (c *watchedConn) Read(p []byte) (int, error) { return c.watch.Read(p) }

// frameWatch parses the client's frame headers as the bytes go by and records a data frame
// over max, or a message (its data frames up to FIN) over MaxMessage.
type frameWatch struct {
	r   io.Reader
	max int

	mu       sync.Mutex
	header   []byte // the header read so far
	skip     uint64 // payload bytes of the current frame still to pass
	message  uint64 // payload of the current message so far
	tooLarge bool
}

func (f *frameWatch) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	f.mu.Lock()
	f.scan(p[:n])
	f.mu.Unlock()
	return n, err
}

// exceeded reports whether the client broke the frame or message quota.
func (f *frameWatch) exceeded() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.tooLarge
}

func (f *frameWatch) scan(b []byte) {
	for len(b) > 0 {
		if f.skip > 0 {
			n := min(uint64(len(b)), f.skip)
			f.skip -= n
			b = b[n:]
			continue
		}
		f.header = append(f.header, b[0])
		b = b[1:]
		length, ok := frameHeader(f.header)
		if !ok {
			continue
		}
		opcode, fin := f.header[0]&0x0f, f.header[0]&0x80 != 0
		f.header = f.header[:0]
		f.skip = length
		if opcode >= 0x8 { // control frames: 125 bytes at most, not part of a message
			continue
		}
		f.message += length
		if length > uint64(f.max) || f.message > MaxMessage {
			f.tooLarge = true
		}
		if fin {
			f.message = 0
		}
	}
}

// frameHeader decodes a complete frame header (RFC 6455 5.2): the payload's length, ok false
// while h is not a whole header yet.
func frameHeader(h []byte) (length uint64, ok bool) {
	if len(h) < 2 {
		return 0, false
	}
	size := 2
	length = uint64(h[1] & 0x7f)
	switch length {
	case 126:
		size += 2
	case 127:
		size += 8
	}
	if h[1]&0x80 != 0 {
		size += 4 // the masking key
	}
	if len(h) < size {
		return 0, false
	}
	switch length {
	case 126:
		length = uint64(binary.BigEndian.Uint16(h[2:4]))
	case 127:
		length = binary.BigEndian.Uint64(h[2:10])
	}
	return length, true
}
