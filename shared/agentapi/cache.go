package agentapi

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/kilnbuild/kiln/shared/artifacts"
	"github.com/kilnbuild/kiln/shared/buildcache"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// The build cache of a remote host. The key is always the service's own, derived from the build
// the credential names (buildcache.KeyOf): a host restores and saves only the caches of its
// build's organization, project, ref, platform and engine, whatever it sends. A restore is a
// presigned GET of the newest cache (S3), else the cache streamed through the service; a save is
// an upload of the object "cache" (upload.go), then POST cache/saved, which makes it the key's
// newest and keeps the organization under CacheMaxPerOrg. All of it only while the build runs.

// cacheKey is the build's cache key, on a service that keeps caches.
func (s *Server) cacheKey(b *kiln.Build) (buildcache.Key, error) {
	if s.Caches == nil {
		return buildcache.Key{}, kiln.Errorf(kiln.EServiceUnavailable, "this service keeps no build caches")
	}
	k := buildcache.KeyOf(b)
	if err := k.Validate(); err != nil {
		return k, kiln.Errorf(kiln.EInvalidState, "the build has no build cache key (branch, platform and engine version are needed)")
	}
	return k, nil
}

// cacheLatest answers the newest cache of the build's key: a presigned GET of it, or, without
// presigned URLs, where to stream it from.
func (s *Server) cacheLatest(w http.ResponseWriter, r *http.Request, b *kiln.Build) error {
	if err := running(b); err != nil {
		return err
	}
	key, err := s.cacheKey(b)
	if err != nil {
		return err
	}
	// The build's own key's newest cache, else its default branch's: the project is read only
	// when the own key has none.
	e, ok, err := s.Caches.Latest(r.Context(), key)
	from := key
	if err == nil && !ok {
		if base, bok := buildcache.BaseKey(b, s.projectOf(r.Context(), b, key)); bok {
			e, ok, err = s.Caches.Latest(r.Context(), base)
			from = base
		}
	}
	if err != nil {
		return err
	}
	if !ok {
		return noCache(b)
	}
	out := CacheEntry{BuildID: e.BuildID, Size: e.Size, Ref: from.Ref}
	if p, ok := s.Uploads.(artifacts.Presigner); ok {
		out.URL, err = p.PresignGet(r.Context(), e.ObjectKey, e.BuildID+".tar.zst", artifacts.MaxPresignLifetime)
		if kiln.IsCode(err, kiln.ENotFound) {
			return noCache(b) // replaced by a newer one since listed
		}
		if err != nil {
			return err
		}
	} else if s.Artifacts != nil {
		out.Stream = true
	} else {
		return kiln.Errorf(kiln.EServiceUnavailable, "this service has no storage build hosts can restore caches from")
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, out)
	return nil
}

// projectOf is the build's project, for its base key (buildcache.BaseKey); nil when it cannot be
// read, and the build then restores only its own key's cache.
func (s *Server) projectOf(ctx context.Context, b *kiln.Build, key buildcache.Key) *kiln.Project {
	p, err := s.Store.GetProject(ctx, b.OrganizationID, b.ProjectID)
	if err != nil {
		s.log().WarnContext(ctx, "read the project for its default branch's build cache", slog.String("build_id", b.ID),
			slog.String("key", key.Prefix()), slog.String("error", err.Error()))
		return nil
	}
	return p
}

// openCache opens the cache that build saved: of the build's own key, else of its base key (the
// only two a build may restore).
func (s *Server) openCache(ctx context.Context, b *kiln.Build, key buildcache.Key, saver string) (artifacts.Object, error) {
	objectKey, err := buildcache.ObjectKey(key, saver)
	if err != nil {
		return nil, err
	}
	obj, err := s.Artifacts.Open(ctx, objectKey)
	if !kiln.IsCode(err, kiln.ENotFound) {
		return obj, err
	}
	base, ok := buildcache.BaseKey(b, s.projectOf(ctx, b, key))
	if !ok {
		return nil, err
	}
	if objectKey, err = buildcache.ObjectKey(base, saver); err != nil {
		return nil, err
	}
	return s.Artifacts.Open(ctx, objectKey)
}

func noCache(b *kiln.Build) error {
	return kiln.Errorf(kiln.ENotFound, "no build cache for %s, %s, Unreal Engine %s yet", b.Branch, b.Platform, b.UEVersion)
}

// cacheObject streams the cache of the build's key that build {build} saved, through the service
// (a service without presigned URLs, such as kiln serve's file store).
func (s *Server) cacheObject(w http.ResponseWriter, r *http.Request, b *kiln.Build) error {
	if err := running(b); err != nil {
		return err
	}
	key, err := s.cacheKey(b)
	if err != nil {
		return err
	}
	if s.Artifacts == nil {
		return kiln.Errorf(kiln.EServiceUnavailable, "this service has no storage build hosts can restore caches from")
	}
	obj, err := s.openCache(r.Context(), b, key, r.PathValue("build"))
	if kiln.IsCode(err, kiln.ENotFound) || errors.Is(err, artifacts.ErrInvalidKey) || errors.Is(err, buildcache.ErrInvalidKey) {
		return noCache(b) // replaced by a newer one since listed
	}
	if err != nil {
		return err
	}
	defer obj.Close()
	// The cache may take longer than the server's write timeout for a whole answer.
	_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
	w.Header().Set("Content-Type", "application/zstd")
	w.Header().Set("Content-Length", strconv.FormatInt(obj.Size(), 10))
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	_, _ = io.Copy(w, obj) // a cut answer is short of Content-Length: the host's Read fails
	return nil
}

// cacheSaved makes the build's uploaded cache its key's newest, removing older ones, and keeps
// the organization's caches under CacheMaxPerOrg. A build that ended has its upload removed.
func (s *Server) cacheSaved(w http.ResponseWriter, r *http.Request, b *kiln.Build) error {
	key, err := s.cacheKey(b)
	if err != nil {
		return err
	}
	objectKey, err := buildcache.ObjectKey(key, b.ID)
	if err != nil {
		return err
	}
	if err := running(b); err != nil {
		if up, oerr := s.objects(); oerr == nil {
			if derr := up.Delete(r.Context(), objectKey); derr != nil {
				s.log().WarnContext(r.Context(), "discard the build cache of a build that ended", slog.String("build_id", b.ID),
					slog.String("key", objectKey), slog.String("error", derr.Error()))
			}
		}
		return err
	}
	e, err := s.Caches.Saved(r.Context(), key, b.ID)
	if errors.Is(err, buildcache.ErrNotStored) {
		return kiln.Errorf(kiln.ENotFound, "the build's cache is not stored: never uploaded, or already replaced by a newer build's")
	}
	if err != nil {
		return err
	}
	s.Caches.Cap(r.Context(), b.OrganizationID, s.CacheMaxPerOrg, e.ObjectKey, s.log())
	writeJSON(w, http.StatusOK, CacheSaved{Size: e.Size})
	return nil
}
