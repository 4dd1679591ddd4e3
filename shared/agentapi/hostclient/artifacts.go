package hostclient

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/kilnbuild/kiln/shared/agentapi"
	"github.com/kilnbuild/kiln/shared/artifacts"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/manifest"
)

// artifactStore is the artifact store of a build host (artifacts.Store): Put streams the
// artifact to the service's storage as a multipart upload, each part PUT to a presigned URL the
// service hands out for the build's own key. It holds at most Concurrency+1 parts in memory and
// nothing on disk. The host can neither read nor delete artifacts: the service removes the
// artifact of a build it refuses to complete.
type artifactStore struct {
	c *Client
	// concurrency is how many parts are sent at once.
	concurrency int
}

var _ artifacts.Store = (*artifactStore)(nil)

// NewArtifactStore returns the artifact store of a build host that sends concurrency parts at
// once (0: DefaultConcurrency).
func NewArtifactStore(c *Client, concurrency int) artifacts.Store {
	return &artifactStore{c: c, concurrency: cmp.Or(concurrency, DefaultConcurrency)}
}

// manifestSuffix ends the key of a size manifest (manifest.Key).
var manifestSuffix = manifest.Key("")

// DefaultConcurrency is how many parts a host sends at once.
const DefaultConcurrency = 2

// abortTimeout bounds the abort of a failed upload, which runs even when ctx is done.
const abortTimeout = 30 * time.Second

// Put uploads the build's artifact, or its size manifest when key is a manifest's key.
func (s *artifactStore) Put(ctx context.Context, key string, write func(w io.Writer) error) error {
	if strings.HasSuffix(key, manifestSuffix) {
		return s.put(ctx, agentapi.UploadManifest, "manifest", key, write)
	}
	return s.put(ctx, "", "artifact", key, write) // {}: the artifact, which services before manifests take too
}

// put uploads the build's object (an agentapi.Upload* name; "": the artifact), which the service
// stores under key, what naming it in errors.
func (s *artifactStore) put(ctx context.Context, object, what, key string, write func(w io.Writer) error) error {
	in, query := agentapi.CreateUploadRequest{Object: object}, ""
	if object != "" {
		query = "?object=" + object
	}
	var up agentapi.Upload
	if err := s.c.call(ctx, http.MethodPost, "artifact/uploads", in, &up); err != nil {
		return fmt.Errorf("start the %s upload: %w", what, err)
	}
	if up.Stream { // no presigned parts here: one streamed PUT
		if up.Key != key {
			return fmt.Errorf("the service stores the %s as %s, not %s", what, up.Key, key)
		}
		if err := s.c.putStream(ctx, query, write); err != nil {
			return fmt.Errorf("put %s %s: %w", what, key, err)
		}
		return nil
	}
	p := &partWriter{ctx: ctx, s: s, up: up, query: query}
	err := func() error {
		if up.Key != key {
			return fmt.Errorf("the service stores the %s as %s, not %s", what, up.Key, key)
		}
		if up.PartSize < 1 || up.PartSize > 5<<30 {
			return fmt.Errorf("the service asked for parts of %d bytes", up.PartSize)
		}
		p.start()
		werr := write(artifacts.ContextWriter(ctx, p))
		if werr == nil {
			werr = p.flush(true)
		}
		if serr := p.group.Wait(); werr == nil || errors.Is(werr, errPartFailed) && serr != nil {
			werr = serr
		}
		if werr != nil {
			return werr
		}
		return s.c.call(ctx, http.MethodPost, "artifact/uploads/"+up.UploadID+"/complete"+query,
			agentapi.CompleteUploadRequest{Parts: p.parts}, nil)
	}()
	if err != nil {
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abortTimeout)
		defer cancel()
		_ = s.c.call(actx, http.MethodDelete, "artifact/uploads/"+up.UploadID+query, nil, nil)
		if ctx.Err() != nil {
			return fmt.Errorf("put %s %s: %w", what, key, ctx.Err())
		}
		return fmt.Errorf("put %s %s: %w", what, key, err)
	}
	return nil
}

func (s *artifactStore) Open(ctx context.Context, key string) (artifacts.Object, error) {
	return nil, errors.New("a build host cannot read artifacts")
}

// Delete does nothing: the service removes the artifact of a build it refuses to complete.
func (s *artifactStore) Delete(ctx context.Context, key string) error { return nil }

// errPartFailed is what a write sees once a part could not be sent.
var errPartFailed = errors.New("an artifact part could not be sent")

// partWriter cuts the stream into parts and sends each from its own goroutine, at most
// concurrency at once; a full buffer waits for a free one.
type partWriter struct {
	ctx   context.Context
	s     *artifactStore
	up    agentapi.Upload
	query string // names the object in the upload's calls ("": the artifact)
	group *errgroup.Group
	gctx  context.Context
	free  chan []byte
	buf   []byte
	next  int32

	mu    sync.Mutex
	parts []artifacts.UploadedPart
}

func (p *partWriter) start() {
	n := max(p.s.concurrency, 1)
	p.group, p.gctx = errgroup.WithContext(p.ctx)
	p.group.SetLimit(n)
	p.free = make(chan []byte, n+1)
	for range n + 1 {
		p.free <- nil // allocated on first use
	}
}

func (p *partWriter) Write(b []byte) (int, error) {
	written := 0
	for len(b) > 0 {
		if p.gctx.Err() != nil {
			return written, errPartFailed
		}
		if p.buf == nil {
			select {
			case buf := <-p.free:
				if buf == nil {
					buf = make([]byte, 0, p.up.PartSize)
				}
				p.buf = buf[:0]
			case <-p.gctx.Done():
				return written, errPartFailed
			}
		}
		n := min(len(b), int(p.up.PartSize)-len(p.buf))
		p.buf = append(p.buf, b[:n]...)
		b, written = b[n:], written+n
		if int64(len(p.buf)) == p.up.PartSize {
			if err := p.flush(false); err != nil {
				return written, err
			}
		}
	}
	return written, nil
}

// flush sends the buffered part; last sends even an empty one if no part was sent (an empty
// artifact).
func (p *partWriter) flush(last bool) error {
	if len(p.buf) == 0 && !(last && p.next == 0) {
		return nil
	}
	p.next++
	number, body := p.next, p.buf
	p.buf = nil
	p.mu.Lock()
	p.parts = append(p.parts, artifacts.UploadedPart{Number: number})
	p.mu.Unlock()
	p.group.Go(func() error {
		defer func() { p.free <- body[:0] }()
		etag, err := p.send(p.gctx, number, body)
		if err != nil {
			return fmt.Errorf("%w: part %d: %w", errPartFailed, number, err)
		}
		p.mu.Lock()
		p.parts[number-1].ETag = etag
		p.mu.Unlock()
		return nil
	})
	return nil
}

// send asks for the part's URL and PUTs the part to it, returning the ETag storage answered.
func (p *partWriter) send(ctx context.Context, number int32, body []byte) (string, error) {
	var u agentapi.PartURL
	path := "artifact/uploads/" + p.up.UploadID + "/parts/" + strconv.Itoa(int(number)) + p.query
	if err := p.s.c.call(ctx, http.MethodPost, path, struct{}{}, &u); err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, u.URL, bytes.NewReader(body))
	if err != nil {
		return "", errors.New("the service's part URL is not valid")
	}
	req.ContentLength = int64(len(body))
	resp, err := p.s.c.http().Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) { // it names the URL, whose signature is not for logs
			return "", fmt.Errorf("send the part to storage: %w", ue.Err)
		}
		return "", err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	etag := resp.Header.Get("ETag")
	if resp.StatusCode != http.StatusOK || etag == "" {
		return "", kiln.Errorf(kiln.EInternal, "storage answered the part with status %d", resp.StatusCode)
	}
	return etag, nil
}
