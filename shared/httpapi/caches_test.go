package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/kilnbuild/kiln/shared/buildcache"
	"github.com/kilnbuild/kiln/shared/keyring"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/nofollow"
	"github.com/kilnbuild/kiln/shared/plans"
)

// cacheFixture is the download fixture's organization with two projects, a build cache saved for
// each, and an API on them whose build caches are caches (or wrap them).
type cacheFixture struct {
	*downloadFixture
	caches     *buildcache.Cache
	doomed     *kiln.Project
	kept       *kiln.Project
	keptKey    buildcache.Key
	doomedSize int64
}

func newCacheFixture(t *testing.T) *cacheFixture {
	t.Helper()
	f := &cacheFixture{downloadFixture: newDownloadFixture(t)}
	var err error
	if f.caches, err = buildcache.New(f.files, nil); err != nil {
		t.Fatal(err)
	}
	for _, p := range []**kiln.Project{&f.doomed, &f.kept} {
		*p = &kiln.Project{ID: kiln.NewID(), OrganizationID: f.org, Name: "Shooter", SourceControl: kiln.SourceGitHub,
			RepoLink: "studio/shooter", InstallationID: "42", DefaultBranch: "main", UprojectPath: "Shooter.uproject",
			CreatedAt: f.now(), UpdatedAt: f.now()}
		if err := f.st.CreateProject(f.ctx, *p, 0); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "Intermediate"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "Intermediate", "Shooter.o"), []byte("object code"), 0o644); err != nil {
		t.Fatal(err)
	}
	project, err := nofollow.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer project.Close()
	for _, p := range []*kiln.Project{f.doomed, f.kept} {
		key := buildcache.Key{Org: f.org, Project: p.ID, Ref: "main", Platform: "Win64", Engine: "5.4"}
		e, _, err := f.caches.Save(f.ctx, key, kiln.NewID(), project)
		if err != nil {
			t.Fatal(err)
		}
		if p == f.kept {
			f.keptKey = key
		} else {
			f.doomedSize = e.Size
		}
	}
	return f
}

// api answers the fixture's organization's requests on a server with the given build caches.
func (f *cacheFixture) api(t *testing.T, caches BuildCaches, maxPerOrg int64) func(method, path string) (int, []byte) {
	t.Helper()
	keys, _ := keyring.New(make([]byte, keyring.MasterKeySize))
	h := New(Config{Store: f.st, Keys: keys, Artifacts: f.files, Plans: &plans.Plans{Store: f.st, Now: f.now},
		BuildCaches: caches, BuildCacheMaxPerOrg: maxPerOrg, Logger: discardLogger(), Now: f.now})
	return func(method, path string) (int, []byte) {
		req := httptest.NewRequest(method, path, nil)
		req.Header.Set("Authorization", "Bearer "+f.created.Token)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code, rec.Body.Bytes()
	}
}

// TestUsageShowsBuildCaches: the usage report shows the bytes and count of the organization's
// build caches and the cap; null when the server keeps none or cannot list them.
func TestUsageShowsBuildCaches(t *testing.T) {
	f := newCacheFixture(t)
	want, err := f.caches.Usage(f.ctx, f.org)
	if err != nil || want.Count != 2 || want.Bytes <= 0 {
		t.Fatalf("fixture usage %+v, %v", want, err)
	}
	cases := []struct {
		name   string
		caches BuildCaches
		max    int64
		want   string
	}{
		{"capped", f.caches, 100 << 30, `{"bytes":` + strconv.FormatInt(want.Bytes, 10) + `,"count":2,"maxBytes":107374182400}`},
		{"no cap", f.caches, 0, `{"bytes":` + strconv.FormatInt(want.Bytes, 10) + `,"count":2,"maxBytes":null}`},
		{"no caches on this server", nil, 100 << 30, `null`},
		{"listing fails", failingCaches{f.caches}, 100 << 30, `null`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, body := f.api(t, c.caches, c.max)("GET", "/organizations/"+f.org+"/usage")
			if code != http.StatusOK {
				t.Fatalf("usage: %d %s", code, body)
			}
			var u struct {
				BuildCaches json.RawMessage `json:"buildCaches"`
			}
			if err := json.Unmarshal(body, &u); err != nil {
				t.Fatal(err)
			}
			if string(u.BuildCaches) != c.want {
				t.Errorf("buildCaches = %s, want %s", u.BuildCaches, c.want)
			}
		})
	}
}

// TestDeleteProjectRemovesItsBuildCaches: deleting a project removes its build caches and no
// other project's; a failure to remove them is logged and the project is deleted all the same.
func TestDeleteProjectRemovesItsBuildCaches(t *testing.T) {
	f := newCacheFixture(t)
	do := f.api(t, f.caches, 0)
	if code, body := do("DELETE", "/projects/"+f.doomed.ID); code != http.StatusNoContent {
		t.Fatalf("delete: %d %s", code, body)
	}
	if u, err := f.caches.Usage(f.ctx, f.org); err != nil || u.Count != 1 {
		t.Errorf("caches after the delete: %+v, %v; want the other project's only", u, err)
	}
	if _, ok, err := f.caches.Latest(f.ctx, f.keptKey); !ok || err != nil {
		t.Errorf("the other project's cache: %v, %v", ok, err)
	}

	failing := f.api(t, failingCaches{f.caches}, 0)
	if code, body := failing("DELETE", "/projects/"+f.kept.ID); code != http.StatusNoContent {
		t.Fatalf("delete while the caches fail: %d %s", code, body)
	}
	if _, err := f.st.GetProject(f.ctx, f.org, f.kept.ID); !kiln.IsCode(err, kiln.ENotFound) {
		t.Errorf("project after the delete: %v, want not found", err)
	}
}

// failingCaches fails every call.
type failingCaches struct{ *buildcache.Cache }

func (failingCaches) Usage(context.Context, string) (buildcache.Usage, error) {
	return buildcache.Usage{}, errors.New("store unreachable")
}

func (failingCaches) DeleteProject(context.Context, string, string) (int, error) {
	return 0, errors.New("store unreachable")
}

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
