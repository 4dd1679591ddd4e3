package hostclient

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/kilnbuild/kiln/shared/agentapi"
	"github.com/kilnbuild/kiln/shared/buildcache"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/nofollow"
	"github.com/kilnbuild/kiln/shared/runner"
)

// caches are the build caches of a remote host (runner.Caches), kept by the service under the
// key it derives from the build: a restore streams the newest cache from a presigned GET (or
// through the service) straight into buildcache.Read, and a save streams buildcache.Write into
// the same upload as the artifact's (presigned parts, or one streamed PUT), then reports it
// saved. Neither holds the archive in memory or on disk.
type caches struct {
	c     *Client
	store *artifactStore
	dirs  []string
}

var _ runner.Caches = (*caches)(nil)

// NewCaches returns the build caches of a host that sends concurrency parts at once (0:
// DefaultConcurrency), keeping the project directories buildcache.DefaultDirs as the service's
// own cache does.
func NewCaches(c *Client, concurrency int) runner.Caches {
	return &caches{c: c, store: &artifactStore{c: c, concurrency: cmp.Or(concurrency, DefaultConcurrency)}, dirs: buildcache.DefaultDirs}
}

func (h *caches) Dirs() []string { return append([]string(nil), h.dirs...) }

// Restore replaces the cached directories of projectDir with the newest cache the service names
// for b: of its own key or, when that has none, its project's default branch's. The service
// picks it from the build (p is not sent): a host never names a key.
func (h *caches) Restore(ctx context.Context, b *kiln.Build, _ *kiln.Project, projectDir *nofollow.Dir) (runner.Restored, buildcache.Stats, error) {
	var none runner.Restored
	var e agentapi.CacheEntry
	if err := h.c.call(ctx, http.MethodGet, "cache", nil, &e); kiln.IsCode(err, kiln.ENotFound) {
		return none, buildcache.Stats{}, fmt.Errorf("%w: %s", buildcache.ErrNoCache, kiln.ErrorMessage(err))
	} else if err != nil {
		return none, buildcache.Stats{}, fmt.Errorf("find the build cache: %w", err)
	}
	body, err := h.open(ctx, e)
	if err != nil {
		return none, buildcache.Stats{}, err
	}
	defer body.Close()
	st, err := buildcache.Read(ctx, body, projectDir, h.dirs)
	if err != nil {
		return none, st, fmt.Errorf("read the build cache of build %s: %w", e.BuildID, err)
	}
	return runner.Restored{BuildID: e.BuildID, Ref: cmp.Or(e.Ref, b.Branch)}, st, nil
}

// open fetches the cache e: from its presigned URL, or through the service.
func (h *caches) open(ctx context.Context, e agentapi.CacheEntry) (io.ReadCloser, error) {
	var req *http.Request
	var err error
	switch {
	case e.URL != "":
		req, err = http.NewRequestWithContext(ctx, http.MethodGet, e.URL, nil)
		if err != nil {
			return nil, errors.New("the service's cache URL is not valid")
		}
	case e.Stream && kiln.ValidID(e.BuildID):
		req, err = http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(h.c.BaseURL, "/")+agentapi.PathPrefix+"cache/"+e.BuildID, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", "Bearer "+h.c.Credential)
	default:
		return nil, errors.New("the service named no cache to fetch")
	}
	resp, err := h.c.streamHTTP().Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) { // it names the URL, whose signature is not for logs
			return nil, fmt.Errorf("fetch the build cache: %w", ue.Err)
		}
		return nil, fmt.Errorf("fetch the build cache: %w", err)
	}
	if resp.StatusCode == http.StatusOK {
		return resp.Body, nil
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound { // replaced by a newer one since it was named
		return nil, fmt.Errorf("%w: the cache of build %s was replaced meanwhile", buildcache.ErrNoCache, e.BuildID)
	}
	if e.URL == "" {
		return nil, fmt.Errorf("fetch the build cache: %w", errorAnswer(resp, http.MethodGet, "cache/"+e.BuildID))
	}
	return nil, fmt.Errorf("fetch the build cache: storage answered status %d", resp.StatusCode)
}

// Save uploads the cached directories of projectDir as b's cache and reports it saved.
func (h *caches) Save(ctx context.Context, b *kiln.Build, projectDir *nofollow.Dir) (int64, buildcache.Stats, error) {
	key, err := buildcache.ObjectKey(buildcache.KeyOf(b), b.ID)
	if err != nil {
		return 0, buildcache.Stats{}, err
	}
	var st buildcache.Stats
	var size int64
	err = h.store.put(ctx, agentapi.UploadCache, "build cache", key, func(w io.Writer) error {
		var err error
		st, err = buildcache.Write(ctx, &countWriter{w: w, n: &size}, projectDir, h.dirs)
		return err
	})
	if err != nil {
		return 0, st, err
	}
	var saved agentapi.CacheSaved
	err = h.c.call(ctx, http.MethodPost, "cache/saved", struct{}{}, &saved)
	if kiln.IsCode(err, kiln.ENotFound) {
		return size, st, nil // uploaded whole, and already replaced by a newer build's: that one serves
	}
	if err != nil {
		return 0, st, fmt.Errorf("report the build cache saved: %w", err)
	}
	return saved.Size, st, nil
}
