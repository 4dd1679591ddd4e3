package delivery

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/textproto"
	"strings"
	"sync"
)

// form is the multipart body around the artifact: everything before its bytes (the metadata part
// and the artifact part's header) and after them (the closing boundary). It is built once per
// delivery, so every attempt uses the same random boundary.
type form struct {
	pre, post   []byte
	contentType string
}

func newForm(m Metadata, filename string) (*form, error) {
	meta, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf) // writes straight to buf, no buffering of its own
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="metadata"`)
	h.Set("Content-Type", "application/json")
	p, err := w.CreatePart(h)
	if err != nil {
		return nil, err
	}
	if _, err := p.Write(meta); err != nil {
		return nil, err
	}
	h = textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="artifact"; filename="`+quoteEscaper.Replace(filename)+`"`)
	h.Set("Content-Type", "application/gzip")
	if _, err := w.CreatePart(h); err != nil {
		return nil, err
	}
	f := &form{pre: bytes.Clone(buf.Bytes()), contentType: w.FormDataContentType()}
	buf.Reset()
	if err := w.Close(); err != nil {
		return nil, err
	}
	f.post = bytes.Clone(buf.Bytes())
	return f, nil
}

// quoteEscaper escapes a quoted header parameter as mime/multipart does, and drops line breaks.
var quoteEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\r", "", "\n", "")

// body streams one attempt's request body: pre, the artifact's size bytes, post.
func (f *form) body(art io.ReadCloser, size int64) *body {
	b := &body{art: art, length: int64(len(f.pre)) + size + int64(len(f.post))}
	b.r = io.MultiReader(bytes.NewReader(f.pre), &sized{b: b, left: size}, bytes.NewReader(f.post))
	return b
}

// body is a request body that closes the artifact and remembers whether reading it failed (the
// transport may still be reading it in its own goroutine when Do returns, hence the mutex).
type body struct {
	r      io.Reader
	art    io.ReadCloser
	length int64

	mu        sync.Mutex
	readErr   bool
	closeOnce sync.Once
}

func (b *body) Read(p []byte) (int, error) { return b.r.Read(p) }

func (b *body) Close() error {
	var err error
	b.closeOnce.Do(func() { err = b.art.Close() })
	return err
}

func (b *body) failed() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.readErr
}

// sized reads exactly left bytes of the artifact: an artifact shorter than its size, or a read
// error, fails the attempt as "artifact could not be read"; bytes past its size are not sent.
type sized struct {
	b    *body
	left int64
}

func (s *sized) Read(p []byte) (int, error) {
	if s.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > s.left {
		p = p[:s.left]
	}
	n, err := s.b.art.Read(p)
	s.left -= int64(n)
	if err == io.EOF && s.left > 0 {
		err = io.ErrUnexpectedEOF
	}
	if err != nil && err != io.EOF {
		s.b.mu.Lock()
		s.b.readErr = true
		s.b.mu.Unlock()
	}
	if err == io.EOF && s.left == 0 {
		err = nil // the next Read reports EOF; the bytes after the artifact follow
	}
	return n, err
}
