package hostclient_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/accounts"
	"github.com/kilnbuild/kiln/shared/agentapi/hostclient"
	"github.com/kilnbuild/kiln/shared/artifacts"
	"github.com/kilnbuild/kiln/shared/artifacts/fsartifacts"
	"github.com/kilnbuild/kiln/shared/buildcache"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/nofollow"
	"github.com/kilnbuild/kiln/shared/runner"
)

// cacheStore is where a test's service keeps artifacts and caches.
type cacheStore interface {
	artifacts.Store
	buildcache.Lister
}

// withCaches gives the service build caches: in MinIO with presigned URLs (streamed false), or
// in a file store through the service (streamed true, as kiln serve's).
func withCaches(t *testing.T, s *service, streamed bool) cacheStore {
	t.Helper()
	var st cacheStore = s.artifacts
	if streamed {
		files, err := fsartifacts.New(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		s.server.Uploads, s.server.Artifacts, st = nil, files, files
	}
	c, err := buildcache.New(st, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.server.Caches = c
	return st
}

// hostCaches are the build caches of the host of the build whose credential is cred.
func hostCaches(s *service, cred string) runner.Caches {
	return hostclient.NewCaches(&hostclient.Client{BaseURL: s.api.URL, Credential: cred}, 0)
}

// projectDir is a project whose cached directories hold what.
func projectDir(t *testing.T, what string) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"Intermediate/Build/obj1.o", "DerivedDataCache/FakeUAT/Asset1.udd"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), []byte(what), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// opened opens a project directory as hosts restore into and save from it.
func opened(t *testing.T, dir string) *nofollow.Dir {
	t.Helper()
	d, err := nofollow.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func holds(t *testing.T, dir string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "Intermediate/Build/obj1.o"))
	if err != nil {
		return "(nothing: " + err.Error() + ")"
	}
	return string(data)
}

// rivalProject is a project of another organization with the same name, repository, branch,
// platform and engine as the fixture's.
func rivalProject(t *testing.T, s *service) (*kiln.Project, *kiln.BuildSetting) {
	t.Helper()
	ctx := context.Background()
	now := time.Now().UTC()
	created, err := accounts.CreateOrganization(ctx, s.store, accounts.NewOrganization{Name: "Rival", OwnerEmail: "b@rival.example", OwnerName: "B"}, now)
	if err != nil {
		t.Fatal(err)
	}
	p := *s.project
	p.ID, p.OrganizationID = kiln.NewID(), created.Organization.ID
	if err := s.store.CreateProject(ctx, &p, 0); err != nil {
		t.Fatal(err)
	}
	st := *s.setting
	st.ID, st.OrganizationID, st.ProjectID = kiln.NewID(), p.OrganizationID, p.ID
	if err := s.store.CreateBuildSetting(ctx, &st); err != nil {
		t.Fatal(err)
	}
	return &p, &st
}

// TestHostBuildCacheIsItsOwnOrganizations: a host restores and saves only the caches of its
// build's key, which the service derives from the build: a build of another organization, of a
// project with the same name and branch, finds no cache (and cannot fetch one by naming its
// saver); a save replaces the key's older caches and keeps the organization under its cap; a
// build that ended can do neither, and its upload is removed. With presigned URLs (S3) and
// through the service (a file store).
func TestHostBuildCacheIsItsOwnOrganizations(t *testing.T) {
	for _, streamed := range []bool{false, true} {
		t.Run("streamed="+strconv.FormatBool(streamed), func(t *testing.T) {
			s := newService(t)
			st := withCaches(t, s, streamed)
			ctx := t.Context()

			a1, cred1 := s.claimed(t, s.project, s.setting)
			size, stats, err := hostCaches(s, cred1).Save(ctx, a1, opened(t, projectDir(t, "a1")))
			if err != nil || size <= 0 || stats.Files != 2 {
				t.Fatalf("save: %d bytes, %+v, %v", size, stats, err)
			}

			// Another organization's build of a project of the same name and branch: no cache.
			rp, rs := rivalProject(t, s)
			rb, rcred := s.claimed(t, rp, rs)
			dir := projectDir(t, "rival's own")
			if from, _, err := hostCaches(s, rcred).Restore(ctx, rb, nil, opened(t, dir)); !errors.Is(err, buildcache.ErrNoCache) {
				t.Fatalf("the rival's restore: from %q, %v; want no cache", from, err)
			}
			if status, body := raw(t, s, http.MethodGet, "cache", "Bearer "+rcred, ""); status != http.StatusNotFound || body.Error != kiln.ENotFound {
				t.Fatalf("the rival's GET cache: %d %+v; want 404 not_found", status, body)
			}
			if status, _ := raw(t, s, http.MethodGet, "cache/"+a1.ID, "Bearer "+rcred, ""); status != http.StatusNotFound && status != http.StatusServiceUnavailable {
				t.Fatalf("the rival's GET cache/<a1>: %d; want 404 (or 503 without streaming)", status)
			}
			// The rival saving names no key: its cache lands under its own organization.
			if _, _, err := hostCaches(s, rcred).Save(ctx, rb, opened(t, dir)); err != nil {
				t.Fatal(err)
			}
			if infos, err := st.List(ctx, buildcache.OrgPrefix(rp.OrganizationID)); err != nil || len(infos) != 1 {
				t.Fatalf("the rival's caches: %v, %v; want its one", infos, err)
			}

			// The next build of the key restores a1's, then saves its own, which replaces it.
			a2, cred2 := s.claimed(t, s.project, s.setting)
			dir2 := t.TempDir()
			from, stats, err := hostCaches(s, cred2).Restore(ctx, a2, nil, opened(t, dir2))
			if err != nil || from.BuildID != a1.ID || stats.Files != 2 || holds(t, dir2) != "a1" {
				t.Fatalf("restore: from %q, %+v, %v, holding %q; want a1's", from, stats, err, holds(t, dir2))
			}
			if err := os.WriteFile(filepath.Join(dir2, "Intermediate/Build/obj1.o"), []byte("a2"), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, _, err := hostCaches(s, cred2).Save(ctx, a2, opened(t, dir2)); err != nil {
				t.Fatal(err)
			}
			key := buildcache.KeyOf(a1)
			infos, err := st.List(ctx, key.Prefix())
			if want, _ := buildcache.ObjectKey(key, a2.ID); err != nil || len(infos) != 1 || infos[0].Key != want {
				t.Fatalf("the key's caches: %+v, %v; want a2's only", infos, err)
			}
			a3, cred3 := s.claimed(t, s.project, s.setting)
			dir3 := t.TempDir()
			if from, _, err := hostCaches(s, cred3).Restore(ctx, a3, nil, opened(t, dir3)); err != nil || from.BuildID != a2.ID || holds(t, dir3) != "a2" {
				t.Fatalf("restore after the save: from %q, %v, holding %q; want a2's", from, err, holds(t, dir3))
			}

			// A new branch's first build restores main's cache (its project's default branch),
			// read-only: its save goes to its own key, and main's keeps a2's alone.
			feature := *s.setting
			feature.Branch = "feature/new"
			f1, fcred := s.claimed(t, s.project, &feature)
			dirF := t.TempDir()
			if from, _, err := hostCaches(s, fcred).Restore(ctx, f1, nil, opened(t, dirF)); err != nil || from.BuildID != a2.ID || from.Ref != "main" || holds(t, dirF) != "a2" {
				t.Fatalf("a new branch's restore: from %+v, %v, holding %q; want main's a2", from, err, holds(t, dirF))
			}
			if status, _ := raw(t, s, http.MethodGet, "cache/"+a2.ID, "Bearer "+fcred, ""); status != http.StatusOK && status != http.StatusServiceUnavailable {
				t.Fatalf("the new branch's GET cache/<a2>: %d; want 200 (or 503 without streaming)", status)
			}
			if _, _, err := hostCaches(s, fcred).Save(ctx, f1, opened(t, dirF)); err != nil {
				t.Fatal(err)
			}
			if infos, err := st.List(ctx, key.Prefix()); err != nil || len(infos) != 1 || !strings.HasSuffix(infos[0].Key, a2.ID+".tar.zst") {
				t.Fatalf("main's caches after the new branch saved: %+v, %v; want a2's only", infos, err)
			}
			if infos, err := st.List(ctx, buildcache.KeyOf(f1).Prefix()); err != nil || len(infos) != 1 {
				t.Fatalf("the new branch's caches: %+v, %v; want its own", infos, err)
			}

			// Over the organization's cap, a save of another key evicts the oldest. (The cap
			// shrinks after the upload, which is never larger than the cap: cache_cap_test.go.)
			dev := *s.setting
			dev.Branch = "dev"
			d1, dcred := s.claimed(t, s.project, &dev)
			if _, _, err := hostCaches(s, dcred).Save(ctx, d1, opened(t, projectDir(t, "dev"))); err != nil {
				t.Fatal(err)
			}
			s.server.CacheMaxPerOrg = 1
			if status, body := raw(t, s, http.MethodPost, "cache/saved", "Bearer "+dcred, "{}"); status != http.StatusOK {
				t.Fatalf("cache/saved over the cap: %d %+v", status, body)
			}
			if infos, err := st.List(ctx, buildcache.OrgPrefix(s.orgID)); err != nil || len(infos) != 1 || infos[0].Key[len(infos[0].Key)-len(d1.ID)-8:] != d1.ID+".tar.zst" {
				t.Fatalf("the org's caches over the cap: %+v, %v; want dev's only", infos, err)
			}
			s.server.CacheMaxPerOrg = 0

			// A build that ended restores and saves nothing; an upload it made is removed.
			a4, cred4 := s.claimed(t, s.project, s.setting)
			objectKey, _ := buildcache.ObjectKey(buildcache.KeyOf(a4), a4.ID)
			if err := st.Put(ctx, objectKey, func(w io.Writer) error { _, err := w.Write([]byte("late")); return err }); err != nil {
				t.Fatal(err)
			}
			if _, err := s.lifecycle.Fail(ctx, s.orgID, a4.ID, "cancelled"); err != nil {
				t.Fatal(err)
			}
			if _, _, err := hostCaches(s, cred4).Restore(ctx, a4, nil, opened(t, t.TempDir())); errors.Is(err, buildcache.ErrNoCache) || !kiln.IsCode(err, kiln.EInvalidState) {
				t.Errorf("restore of an ended build: %v; want invalid_state", err)
			}
			if _, _, err := hostCaches(s, cred4).Save(ctx, a4, opened(t, projectDir(t, "a4"))); !kiln.IsCode(err, kiln.EInvalidState) {
				t.Errorf("save of an ended build: %v; want invalid_state", err)
			}
			if status, body := raw(t, s, http.MethodPost, "cache/saved", "Bearer "+cred4, "{}"); status != http.StatusConflict || body.Error != kiln.EInvalidState {
				t.Errorf("cache/saved of an ended build: %d %+v; want 409 invalid_state", status, body)
			}
			if _, err := st.Open(ctx, objectKey); !kiln.IsCode(err, kiln.ENotFound) {
				t.Errorf("the ended build's upload: %v; want removed", err)
			}
		})
	}
}
