package packaging

import (
	"crypto/md5"
	"hash"
	"io"
	"sync"
)

const (
	outBufSize = 1 << 20
	outBufs    = 4
)

// output buffers the compressed stream, counts and MD5-hashes it, and hands full buffers to a
// goroutine that writes them to w, so that hashing (the slowest sequential step) and writing run
// side by side. It is used by one goroutine; Close returns the first error of w.
type output struct {
	h    hash.Hash
	n    int64
	buf  []byte
	full chan []byte
	free chan []byte
	done chan struct{}

	mu  sync.Mutex
	err error // the first error of w
}

func newOutput(w io.Writer) *output {
	o := &output{
		h:    md5.New(),
		full: make(chan []byte, outBufs),
		free: make(chan []byte, outBufs),
		done: make(chan struct{}),
	}
	for range outBufs - 1 {
		o.free <- make([]byte, 0, outBufSize)
	}
	o.buf = make([]byte, 0, outBufSize)
	go func() {
		defer close(o.done)
		for b := range o.full {
			if o.failed() == nil {
				if _, err := w.Write(b); err != nil {
					o.mu.Lock()
					o.err = err
					o.mu.Unlock()
				}
			}
			o.free <- b[:0]
		}
	}()
	return o
}

func (o *output) failed() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.err
}

// Write buffers p; it fails once a write to w failed.
func (o *output) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		n := min(len(p), outBufSize-len(o.buf))
		o.buf = append(o.buf, p[:n]...)
		written += n
		p = p[n:]
		if len(o.buf) == outBufSize {
			if err := o.flush(); err != nil {
				return written, err
			}
		}
	}
	return written, nil
}

// flush hashes the buffer and sends it to the writing goroutine.
func (o *output) flush() error {
	if err := o.failed(); err != nil {
		return err
	}
	if len(o.buf) == 0 {
		return nil
	}
	o.h.Write(o.buf)
	o.n += int64(len(o.buf))
	o.full <- o.buf
	o.buf = <-o.free
	return nil
}

// Close writes what is buffered, waits for the writes to end and returns the first error.
func (o *output) Close() error {
	err := o.flush()
	close(o.full)
	<-o.done
	if err != nil {
		return err
	}
	return o.failed()
}

// size and sum describe the bytes written, after a successful Close.
func (o *output) size() int64 { return o.n }
func (o *output) sum() []byte { return o.h.Sum(nil) }
