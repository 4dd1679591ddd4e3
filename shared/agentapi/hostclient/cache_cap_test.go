package hostclient_test

import (
	"context"
	"crypto/rand"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/buildcache"
	"github.com/kilnbuild/kiln/shared/builds"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// bigProjectDir is a project whose cache holds size incompressible bytes.
func bigProjectDir(t *testing.T, size int) string {
	t.Helper()
	dir := projectDir(t, "big")
	data := make([]byte, size)
	_, _ = rand.Read(data)
	if err := os.WriteFile(filepath.Join(dir, "Intermediate/Build/big.bin"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestHostCacheUploadPastItsRoomIsRefused: a host's cache upload is never larger than the
// organization's room under KILN_CACHE_MAX_PER_ORG (less the uploads of its other running builds)
// nor than the data volume takes above its reserve: past it the answer is 413 payload_too_large
// and nothing of the upload stays. With presigned parts (S3) and streamed through the service.
func TestHostCacheUploadPastItsRoomIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name     string
		streamed bool
		limit    func(s *service)
		others   int // running builds of other keys that uploaded a 64 KiB cache first
		want     string
	}{
		{"org cap, parts", false, func(s *service) { s.server.CacheMaxPerOrg = 32 << 10 }, 0, "the organization's room for build caches (32 KiB of its 32 KiB"},
		{"org cap, streamed", true, func(s *service) { s.server.CacheMaxPerOrg = 32 << 10 }, 0, "the organization's room for build caches (32 KiB of its 32 KiB"},
		{"others' uploads take the room", true, func(s *service) { s.server.CacheMaxPerOrg = 160 << 10 }, 2, "the organization's room for build caches ("},
		{"data volume's reserve", true, func(s *service) {
			s.server.DiskRoom = func(context.Context) (int64, error) { return 32 << 10, nil }
		}, 0, "the room the service's data volume has above its reserve (32 KiB)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newService(t)
			st := withCaches(t, s, tc.streamed)
			ctx := t.Context()
			for i := range tc.others {
				other := *s.setting
				other.Branch = "other-" + strconv.Itoa(i)
				ob, ocred := s.claimed(t, s.project, &other)
				if _, _, err := hostCaches(s, ocred).Save(ctx, ob, opened(t, bigProjectDir(t, 64<<10))); err != nil {
					t.Fatal(err)
				}
			}
			tc.limit(s)
			before, err := s.server.Caches.Usage(ctx, s.orgID)
			if err != nil {
				t.Fatal(err)
			}
			b, cred := s.claimed(t, s.project, s.setting)
			_, _, err = hostCaches(s, cred).Save(ctx, b, opened(t, bigProjectDir(t, 64<<10)))
			if !kiln.IsCode(err, kiln.EPayloadTooLarge) || !strings.Contains(err.Error(), "the build cache is larger than "+tc.want) {
				t.Fatalf("save past the room: %v; want payload_too_large naming %q", err, tc.want)
			}
			objectKey, _ := buildcache.ObjectKey(buildcache.KeyOf(b), b.ID)
			if _, err := st.Open(ctx, objectKey); !kiln.IsCode(err, kiln.ENotFound) {
				t.Errorf("the refused upload: %v; want nothing stored", err)
			}
			if after, err := s.server.Caches.Usage(ctx, s.orgID); err != nil || after != before {
				t.Errorf("usage after the refusal: %+v, %v; want %+v", after, err, before)
			}
			if tc.streamed { // a body that says its size up front is refused before it is read
				status, body := raw(t, s, http.MethodPut, "artifact?object=cache", "Bearer "+cred, strings.Repeat("x", 1<<20))
				if status != http.StatusRequestEntityTooLarge || body.Error != kiln.EPayloadTooLarge {
					t.Errorf("PUT past the room: %d %+v; want 413 payload_too_large", status, body)
				}
			}
		})
	}
}

// TestHostCacheOfABuildThatEndsUnsavedIsRemoved: a cache a host uploaded for a build that then
// ends without completing is removed when the build ends, and the organization's usage no
// longer counts it.
func TestHostCacheOfABuildThatEndsUnsavedIsRemoved(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(t *testing.T, s *service, b *kiln.Build, cred string)
	}{
		{"the host fails it", func(t *testing.T, s *service, b *kiln.Build, cred string) {
			if status, body := raw(t, s, http.MethodPost, "fail", "Bearer "+cred, `{"reason":"compile error"}`); status != http.StatusOK {
				t.Fatalf("fail: %d %+v", status, body)
			}
		}},
		{"cancelled", func(t *testing.T, s *service, b *kiln.Build, cred string) {
			if _, _, err := s.lifecycle.Cancel(t.Context(), b.OrganizationID, b.ID); err != nil {
				t.Fatal(err)
			}
		}},
		{"time limit", lifecycleFail("time limit")},
		{"host silent", lifecycleFail(builds.ReasonSilentHost)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newService(t)
			st := withCaches(t, s, true)
			s.lifecycle.Events.(*builds.Fanout).Caches = buildcache.Discarder{Cache: s.server.Caches}
			ctx := t.Context()
			b, cred := s.claimed(t, s.project, s.setting)
			if status, body := raw(t, s, http.MethodPut, "artifact?object=cache", "Bearer "+cred, strings.Repeat("x", 2<<20)); status != http.StatusOK {
				t.Fatalf("upload: %d %+v", status, body)
			}
			if u, err := s.server.Caches.Usage(ctx, s.orgID); err != nil || u.Bytes != 2<<20 {
				t.Fatalf("usage with the upload: %+v, %v", u, err)
			}
			tc.end(t, s, b, cred)
			objectKey, _ := buildcache.ObjectKey(buildcache.KeyOf(b), b.ID)
			if _, err := st.Open(ctx, objectKey); !kiln.IsCode(err, kiln.ENotFound) {
				t.Errorf("the ended build's upload: %v; want removed", err)
			}
			if u, err := s.server.Caches.Usage(ctx, s.orgID); err != nil || u.Bytes != 0 || u.Count != 0 {
				t.Errorf("usage after the build ended: %+v, %v; want nothing", u, err)
			}
		})
	}
}

func lifecycleFail(reason string) func(t *testing.T, s *service, b *kiln.Build, cred string) {
	return func(t *testing.T, s *service, b *kiln.Build, _ string) {
		if _, err := s.lifecycle.Fail(t.Context(), b.OrganizationID, b.ID, reason); err != nil {
			t.Fatal(err)
		}
	}
}
