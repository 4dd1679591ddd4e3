package packaging

import (
	"bytes"
	"context"
	"encoding/binary"
	"hash/crc32"
	"io"
	"runtime"
	"sync"
)

// hint tells the gzip stream what kind of bytes follow, so that it can cut its chunks where the
// kind changes and spend CPU only where it pays.
type hint uint8

const (
	// hintDeflate: tar headers, small files, text: always deflated.
	hintDeflate hint = iota
	// hintAuto: the content of a large file of unknown kind: each chunk is sampled, and stored
	// when the sample does not compress.
	hintAuto
	// hintStore: the content of a large file whose extension names a compressed format: each
	// chunk is stored unless its sample compresses clearly (an uncompressed .pak, say).
	hintStore
)

const (
	chunkSize     = 1 << 20 // uncompressed bytes per job
	windowSize    = 32 << 10
	maxStoredSize = 1<<16 - 1 // the largest stored deflate block
)

// gzipStream writes ONE standard gzip member (RFC 1952) whose deflate stream is built from
// independently made, byte-aligned pieces, like pigz does:
//
//   - the uncompressed stream is cut into chunks of up to chunkSize bytes (and wherever the hint
//     changes);
//   - workers turn each chunk either into stored blocks (incompressible data costs no CPU and
//     grows by 5 bytes per 64 KiB) or into deflate blocks ended by a sync flush (an empty stored
//     block, which leaves the stream byte-aligned and not final); a deflated chunk starts with the
//     previous 32 KiB of the stream as its dictionary, so matches reach across chunks exactly as
//     in one deflate run;
//   - one goroutine puts the pieces in order, then a final empty stored block and the gzip
//     trailer (CRC-32 and size of the uncompressed stream, computed by the producer), into an
//     output that MD5-hashes the stream while another goroutine writes it out.
//
// Whatever the number of CPUs, the same input gives the same bytes. Memory is bounded by the
// number of chunks in flight (2×GOMAXPROCS+2 of 1 MiB). Write and setHint are called from one
// goroutine; Close or abort must be called once at the end.
type gzipStream struct {
	ctx    context.Context
	cancel context.CancelCauseFunc

	cur     *chunk
	curHint hint
	history []byte // the last ≤ 32 KiB of the uncompressed stream before cur
	crc     uint32
	size    uint64 // uncompressed bytes, for the trailer (mod 2^32)

	work    chan *chunk
	order   chan *chunk
	workers sync.WaitGroup
	out     *output
	done    chan struct{} // closed when the writer goroutine has returned
	err     error         // the writer goroutine's result, read after done
	closed  bool
}

type chunk struct {
	in     []byte
	dict   []byte
	hint   hint
	out    bytes.Buffer // deflate blocks, unless stored
	stored bool
	ready  chan struct{}
}

var chunkPool = sync.Pool{New: func() any {
	return &chunk{in: make([]byte, 0, chunkSize), dict: make([]byte, 0, windowSize)}
}}

// newGzipStream starts the workers and the writer goroutine. w receives the compressed bytes;
// level is a klauspost/compress/flate level (1..9).
func newGzipStream(ctx context.Context, w io.Writer, level int) *gzipStream {
	ctx, cancel := context.WithCancelCause(ctx)
	n := runtime.GOMAXPROCS(0)
	inFlight := 2*n + 2
	z := &gzipStream{
		ctx:     ctx,
		cancel:  cancel,
		history: make([]byte, 0, windowSize),
		work:    make(chan *chunk, inFlight+2),
		order:   make(chan *chunk, inFlight),
		out:     newOutput(w),
		done:    make(chan struct{}),
	}
	for range n {
		z.workers.Add(1)
		go func() {
			defer z.workers.Done()
			c := newCompressor(level)
			for ch := range z.work {
				if ctx.Err() == nil {
					c.encode(ch)
				}
				close(ch.ready)
			}
		}()
	}
	go func() {
		defer close(z.done)
		z.err = z.writeOut()
		if z.err != nil {
			z.cancel(z.err)
		}
	}()
	return z
}

// setHint declares the kind of the bytes written next.
func (z *gzipStream) setHint(h hint) error {
	if h != z.curHint && z.cur != nil && len(z.cur.in) > 0 {
		if err := z.submit(); err != nil {
			return err
		}
	}
	z.curHint = h
	return nil
}

// Write adds p to the uncompressed stream.
func (z *gzipStream) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		if z.cur == nil {
			if err := z.failed(); err != nil {
				return written, err
			}
			z.cur = chunkPool.Get().(*chunk)
		}
		n := min(len(p), chunkSize-len(z.cur.in))
		z.cur.in = append(z.cur.in, p[:n]...)
		z.crc = crc32.Update(z.crc, crc32.IEEETable, p[:n])
		z.size += uint64(n)
		written += n
		p = p[n:]
		if len(z.cur.in) == chunkSize {
			if err := z.submit(); err != nil {
				return written, err
			}
		}
	}
	return written, nil
}

// submit hands the current chunk to the workers and the writer, in stream order.
func (z *gzipStream) submit() error {
	ch := z.cur
	z.cur = nil
	ch.hint = z.curHint
	ch.dict = append(ch.dict[:0], z.history...)
	ch.ready = make(chan struct{})
	// Slide the history window over the chunk.
	if len(ch.in) >= windowSize {
		z.history = append(z.history[:0], ch.in[len(ch.in)-windowSize:]...)
	} else {
		keep := min(len(z.history), windowSize-len(ch.in))
		z.history = append(z.history[:0], z.history[len(z.history)-keep:]...)
		z.history = append(z.history, ch.in...)
	}
	select {
	case z.order <- ch:
	case <-z.ctx.Done():
		return z.failed()
	}
	z.work <- ch // never blocks: work holds more than order can
	return nil
}

// failed returns why the stream stopped, or nil while it runs.
func (z *gzipStream) failed() error {
	if z.ctx.Err() == nil {
		return nil
	}
	return context.Cause(z.ctx)
}

// Close writes what is left and the gzip trailer, and waits for the output to be written.
func (z *gzipStream) Close() error {
	if z.closed {
		return nil
	}
	var err error
	if z.cur != nil && len(z.cur.in) > 0 {
		err = z.submit()
	}
	z.shutdown()
	if z.err != nil {
		return z.err
	}
	return err
}

// written returns the size and MD5 of the compressed stream, after Close returned nil.
func (z *gzipStream) written() (int64, []byte) { return z.out.size(), z.out.sum() }

// abort stops the stream without finishing it; the output is then incomplete.
func (z *gzipStream) abort(cause error) {
	if z.closed {
		return
	}
	z.cancel(cause)
	z.shutdown()
}

func (z *gzipStream) shutdown() {
	z.closed = true
	close(z.order)
	close(z.work)
	z.workers.Wait()
	<-z.done
	z.cancel(nil)
}

// writeOut runs on its own goroutine: header, every chunk in order, final block, trailer.
func (z *gzipStream) writeOut() (err error) {
	out := z.out
	defer func() {
		if cerr := out.Close(); err == nil {
			err = cerr
		}
	}()
	// ID1 ID2 CM=deflate FLG=0 MTIME=0 XFL=0 OS=unknown, as Go's gzip.Writer writes it.
	if _, err := out.Write([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255}); err != nil {
		return err
	}
	for ch := range z.order {
		select {
		case <-ch.ready:
		case <-z.ctx.Done():
			return context.Cause(z.ctx)
		}
		if z.ctx.Err() != nil {
			return context.Cause(z.ctx)
		}
		var err error
		if ch.stored {
			err = writeStored(out, ch.in)
		} else {
			_, err = out.Write(ch.out.Bytes())
		}
		releaseChunk(ch)
		if err != nil {
			return err
		}
	}
	if err := z.failed(); err != nil {
		return err // aborted: no trailer
	}
	// A final empty stored block ends the deflate stream (BFINAL=1, BTYPE=00, LEN=0, NLEN=0xffff).
	var tail [13]byte
	copy(tail[:5], []byte{1, 0, 0, 0xff, 0xff})
	binary.LittleEndian.PutUint32(tail[5:], z.crc)
	binary.LittleEndian.PutUint32(tail[9:], uint32(z.size))
	_, err = out.Write(tail[:])
	return err
}

func releaseChunk(ch *chunk) {
	ch.in, ch.dict, ch.stored, ch.ready = ch.in[:0], ch.dict[:0], false, nil
	ch.out.Reset()
	chunkPool.Put(ch)
}

// writeStored frames p as non-final stored deflate blocks. The stream is byte-aligned before and
// after each one, so a block header is a zero byte followed by LEN and NLEN.
func writeStored(w io.Writer, p []byte) error {
	var hdr [5]byte
	for len(p) > 0 {
		n := min(len(p), maxStoredSize)
		binary.LittleEndian.PutUint16(hdr[1:], uint16(n))
		binary.LittleEndian.PutUint16(hdr[3:], ^uint16(n))
		if _, err := w.Write(hdr[:]); err != nil {
			return err
		}
		if _, err := w.Write(p[:n]); err != nil {
			return err
		}
		p = p[n:]
	}
	return nil
}

// storedSize is the size of p written by writeStored.
func storedSize(n int) int { return n + 5*((n+maxStoredSize-1)/maxStoredSize) }
