package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/kilnbuild/kiln/shared/buildcache"
	"github.com/kilnbuild/kiln/shared/buildsteps"
	"github.com/kilnbuild/kiln/shared/diskspace"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/nofollow"
)

// The build cache around a build: before it, warmUp makes the project's cached directories those
// of the newest cache of the build's key (or removes them: a cold build), and records on the
// build how it started; after a successful one, saveCache stores them for the next build.
//
// A workspace kept on this host (kiln serve, a studio's agent) may already hold the cache: the
// marker file beside it (outside what the build may write) names the key and the build whose
// cache the directories hold, so a build of the same key in the same workspace starts warm without
// a restore. Any other key (another platform or engine version) restores or clears them.

// warmUp prepares the cached directories of projectDir and records how the build starts. A
// cache that cannot be restored makes a cold build, never a failed one. projectDir nil (no such
// directory in the checkout) leaves the cache alone: the build step fails on it.
func (r *Runner) warmUp(ctx context.Context, b *kiln.Build, p *kiln.Project, projectDir *nofollow.Dir, marker string, rep *reporter) error {
	if r.Caches == nil || projectDir == nil {
		return nil
	}
	key := buildcache.KeyOf(b).Prefix()
	state, from, reason, msg := r.restore(ctx, b, p, projectDir, marker, key)
	if state == kiln.CacheCold {
		if err := buildcache.RemoveDirs(projectDir, r.Caches.Dirs()); err != nil {
			return fmt.Errorf("clear the build cache's directories: %w", err)
		}
		_ = os.Remove(marker)
	}
	rep.Log(ctx, buildsteps.LogLine{Time: r.now(), Level: buildsteps.LevelInfo, Message: "kiln: " + msg})
	_, err := r.Lifecycle.Progress(ctx, b.OrganizationID, b.ID, func(cur *kiln.Build) {
		cur.Cache, cur.CacheFrom, cur.CacheReason = state, from, reason
	})
	if kiln.IsCode(err, kiln.EInvalidState) {
		return context.Canceled // ended elsewhere; the workflow stops us
	}
	b.Cache, b.CacheFrom, b.CacheReason = state, from, reason
	return err
}

// restore finds the build's cache: in the workspace, or restored from the cache store (the
// build's own key's, else its project's default branch's).
func (r *Runner) restore(ctx context.Context, b *kiln.Build, p *kiln.Project, projectDir *nofollow.Dir, marker, key string) (state kiln.CacheState, from, reason, msg string) {
	if b.Clean {
		return kiln.CacheCold, "", kiln.CacheReasonClean, "cold build: " + kiln.CacheReasonClean + "; the build cache is ignored, and replaced if the build completes"
	}
	if heldKey, heldFrom, ok := readMarker(marker); ok && heldKey == key {
		return kiln.CacheWarm, heldFrom, "", fmt.Sprintf("warm build: the workspace holds the build cache of build %s (%s)", heldFrom, describeKey(b))
	}
	start := r.now()
	got, st, err := r.Caches.Restore(ctx, b, p, projectDir)
	switch {
	case err == nil && got.Ref != "" && got.Ref != b.Branch:
		// The default branch's cache: the workspace holds that key's, not the build's own.
		base := *b
		base.Branch = got.Ref
		writeMarker(marker, buildcache.KeyOf(&base).Prefix(), got.BuildID, r.log())
		return kiln.CacheWarm, got.BuildID, "", fmt.Sprintf("warm build: %s has no build cache yet, so kiln restored the default branch's: "+
			"the build cache of build %s (%s): %d files, %s, in %s; this build saves its own for %s",
			b.Branch, got.BuildID, describeKey(&base), st.Files, diskspace.Format(st.Bytes), r.now().Sub(start).Round(time.Millisecond), b.Branch)
	case err == nil:
		writeMarker(marker, key, got.BuildID, r.log())
		return kiln.CacheWarm, got.BuildID, "", fmt.Sprintf("warm build: restored the build cache of build %s (%s): %d files, %s, in %s",
			got.BuildID, describeKey(b), st.Files, diskspace.Format(st.Bytes), r.now().Sub(start).Round(time.Millisecond))
	case errors.Is(err, buildcache.ErrNoCache):
		return kiln.CacheCold, "", kiln.CacheReasonNone, "cold build: " + kiln.CacheReasonNone + " (" + describeKey(b) + ")"
	}
	r.log().WarnContext(ctx, "restore build cache", slog.String("build_id", b.ID), slog.String("error", err.Error()))
	reason = kiln.CacheReasonRestore + ": " + restoreCause(err)
	return kiln.CacheCold, "", reason, "cold build: " + reason
}

// saveCache stores the build's cached directories for the next build of its key. A failure is
// a warning in the log, never the build's. The project directory is opened anew, without
// following links: the build may have left a link where it was.
func (r *Runner) saveCache(ctx context.Context, b *kiln.Build, checkout, uproject, marker string, rep *reporter) {
	if r.Caches == nil {
		return
	}
	projectDir, err := openProjectDir(checkout, uproject)
	if err != nil || projectDir == nil {
		why := "the project directory is gone"
		if err != nil {
			why = err.Error()
		}
		r.log().WarnContext(ctx, "save build cache", slog.String("build_id", b.ID), slog.String("error", why))
		rep.Log(ctx, buildsteps.LogLine{Time: r.now(), Level: buildsteps.LevelWarn, Message: "kiln: the build cache was not saved: " + why})
		_ = os.Remove(marker)
		return
	}
	defer projectDir.Close()
	start := r.now()
	size, st, err := r.Caches.Save(ctx, b, projectDir)
	if err != nil {
		r.log().WarnContext(ctx, "save build cache", slog.String("build_id", b.ID), slog.String("error", err.Error()))
		rep.Log(ctx, buildsteps.LogLine{Time: r.now(), Level: buildsteps.LevelWarn, Message: "kiln: the build cache could not be saved; the next build of " +
			describeKey(b) + " starts from the previous cache, or cold"})
		_ = os.Remove(marker) // the directories no longer hold what the marker says: restore next time
		return
	}
	writeMarker(marker, buildcache.KeyOf(b).Prefix(), b.ID, r.log())
	rep.Log(ctx, buildsteps.LogLine{Time: r.now(), Level: buildsteps.LevelInfo, Message: fmt.Sprintf(
		"kiln: saved the build cache for the next build of %s: %d files, %s (%s stored), in %s",
		describeKey(b), st.Files, diskspace.Format(st.Bytes), diskspace.Format(size), r.now().Sub(start).Round(time.Millisecond))})
}

// describeKey names a build's cache key for its log: branch, platform and engine version.
func describeKey(b *kiln.Build) string {
	return fmt.Sprintf("%s, %s, Unreal Engine %s", b.Branch, b.Platform, b.UEVersion)
}

// restoreCause is the first line of why a restore failed, short enough for the build resource.
func restoreCause(err error) string {
	msg, _, _ := strings.Cut(err.Error(), "\n")
	if len(msg) > 300 {
		msg = msg[:300] + "..."
	}
	return msg
}

// readMarker reads a workspace's cache marker: the key and the build whose cache its
// directories hold.
func readMarker(path string) (key, from string, ok bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", "", false
	}
	key, from, ok = strings.Cut(strings.TrimSpace(string(data)), "\n")
	return key, from, ok && key != "" && kiln.ValidID(from)
}

// writeMarker records that a workspace's cached directories hold key's cache, saved by from.
func writeMarker(path, key, from string, logger *slog.Logger) {
	tmp := path + ".tmp"
	err := os.WriteFile(tmp, []byte(key+"\n"+from+"\n"), 0o600)
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		logger.Warn("record the workspace's build cache", slog.String("path", path), slog.String("error", err.Error()))
	}
}
