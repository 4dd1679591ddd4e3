package agentapi

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/kilnbuild/kiln/shared/diskspace"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// The size of a host's cache upload. A cache is never larger than what the organization may keep
// (CacheMaxPerOrg, less what other running builds of the organization uploaded and have not saved
// yet: saved caches give way to it, oldest first, once it is saved) nor than the data volume
// takes above its reserve (DiskRoom: kiln serve's file store; S3 has no volume). An upload past
// that is refused with 413 payload_too_large and nothing of it is kept.

// cacheRoom is the most bytes the build's cache upload may hold, and what bounds it; 0 and ""
// when nothing does. Without others, the uploads of the organization's other running builds are
// not subtracted (a bound for each part of a multipart upload that reads no build; the
// completed upload is checked with them).
func (s *Server) cacheRoom(ctx context.Context, b *kiln.Build, others bool) (int64, string, error) {
	var limit int64
	var why string
	if s.CacheMaxPerOrg > 0 && s.Caches != nil {
		var pending int64
		if others {
			var err error
			if pending, err = s.pendingCaches(ctx, b); err != nil {
				return 0, "", err
			}
		}
		limit = max(s.CacheMaxPerOrg-pending, 0)
		why = fmt.Sprintf("the organization's room for build caches (%s of its %s, after the uploads of its other running builds)",
			diskspace.Format(limit), diskspace.Format(s.CacheMaxPerOrg))
	}
	if s.DiskRoom != nil {
		room, err := s.DiskRoom(ctx)
		if err != nil {
			return 0, "", fmt.Errorf("the data volume's room for a build cache: %w", err)
		}
		room = max(room, 0)
		if why == "" || room < limit {
			limit, why = room, fmt.Sprintf("the room the service's data volume has above its reserve (%s)", diskspace.Format(room))
		}
	}
	return limit, why, nil
}

// pendingCaches is the bytes of the caches other builds of b's organization that still run
// uploaded: not saved yet, so no save evicts them to make room.
func (s *Server) pendingCaches(ctx context.Context, b *kiln.Build) (int64, error) {
	es, err := s.Caches.Objects(ctx, b.OrganizationID)
	if err != nil {
		return 0, err
	}
	var pending int64
	for _, e := range es {
		if e.BuildID == "" || e.BuildID == b.ID {
			continue
		}
		o, err := s.Store.GetBuild(ctx, b.OrganizationID, e.BuildID)
		if kiln.IsCode(err, kiln.ENotFound) {
			continue
		} else if err != nil {
			return 0, err
		}
		if o.Status == kiln.StatusRunning {
			pending += e.Size
		}
	}
	return pending, nil
}

// cacheTooLarge is the answer to a cache upload past its room.
func cacheTooLarge(why string) error {
	return kiln.Errorf(kiln.EPayloadTooLarge, "the build cache is larger than %s; it was not kept", why)
}

// dropUpload removes an object the host uploaded that is not kept (too large, or its build ended
// while it arrived).
func (s *Server) dropUpload(ctx context.Context, b *kiln.Build, key, why string) {
	up, err := s.objects()
	if err != nil {
		return
	}
	ctx = context.WithoutCancel(ctx)
	if err := up.Delete(ctx, key); err != nil {
		s.log().WarnContext(ctx, "remove a build host's upload", slog.String("build_id", b.ID), slog.String("org_id", b.OrganizationID),
			slog.String("key", key), slog.String("why", why), slog.String("error", err.Error()))
		return
	}
	s.log().InfoContext(ctx, "removed a build host's upload", slog.String("build_id", b.ID), slog.String("org_id", b.OrganizationID),
		slog.String("key", key), slog.String("why", why))
}

// stillRunning removes the object key that arrived for b if b ended meanwhile (its end already
// removed what there was), and says so with invalid_state.
func (s *Server) stillRunning(ctx context.Context, b *kiln.Build, key string) error {
	cur, err := s.Store.GetBuild(ctx, b.OrganizationID, b.ID)
	if err != nil {
		return err
	}
	if err := running(cur); err != nil {
		s.dropUpload(ctx, b, key, "the build ended while it arrived")
		return err
	}
	return nil
}

// isCache says whether an upload call is about the build's cache (?object=cache).
func isCache(r *http.Request) bool { return r.URL.Query().Get("object") == UploadCache }

// keepCompletedCache checks the cache a multipart upload just completed: past its room it is
// removed and refused; if the build ended meanwhile it is removed.
func (s *Server) keepCompletedCache(ctx context.Context, b *kiln.Build, up objects, key string) error {
	room, why, err := s.cacheRoom(ctx, b, true)
	if err != nil {
		return err
	}
	if why != "" {
		size, err := up.Stat(ctx, key)
		if err != nil {
			return err
		}
		if size > room {
			s.dropUpload(ctx, b, key, "larger than "+why)
			return cacheTooLarge(why)
		}
	}
	return s.stillRunning(ctx, b, key)
}
