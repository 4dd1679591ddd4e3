package buildcache

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/artifacts/fsartifacts"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// testStore is a cache on a fresh directory store; setTime changes an object's ModTime.
type testStore struct {
	*Cache
	store   *fsartifacts.Store
	dir     string
	setTime func(objectKey string, mt time.Time)
}

func newTestCache(t *testing.T) testStore {
	t.Helper()
	dir := t.TempDir()
	s, err := fsartifacts.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	return testStore{Cache: c, store: s, dir: dir, setTime: func(key string, mt time.Time) {
		if err := os.Chtimes(filepath.Join(dir, filepath.FromSlash(key)), mt, mt); err != nil {
			t.Fatal(err)
		}
	}}
}

// putObject stores size bytes under key, with ModTime mt.
func (ts testStore) putObject(t *testing.T, key string, size int, mt time.Time) {
	t.Helper()
	if err := ts.store.Put(t.Context(), key, func(w io.Writer) error { _, err := w.Write(make([]byte, size)); return err }); err != nil {
		t.Fatal(err)
	}
	ts.setTime(key, mt)
}

func projectWith(t *testing.T, content string) string {
	root := t.TempDir()
	makeTree(t, root, []node{
		{name: "Intermediate/Build/a.o", mode: 0o644, modTime: t1, data: []byte(content)},
		{name: "DerivedDataCache/x.udd", mode: 0o644, modTime: t2, data: []byte(content + " ddc")},
	})
	return root
}

func TestSaveAndRestore(t *testing.T) {
	c := newTestCache(t)
	key := validKey()
	src := projectWith(t, "v1")
	build := kiln.NewID()
	e, st, err := c.Save(t.Context(), key, build, opened(t, src))
	if err != nil {
		t.Fatal(err)
	}
	wantKey, _ := ObjectKey(key, build)
	if e.ObjectKey != wantKey || e.BuildID != build || e.Size == 0 || st.Files != 2 {
		t.Fatalf("Save = %+v, %+v; want %s", e, st, wantKey)
	}
	dst := projectWith(t, "stale")
	got, _, err := c.Restore(t.Context(), key, opened(t, dst))
	if err != nil {
		t.Fatal(err)
	}
	if got != e {
		t.Errorf("Restore used %+v, want %+v", got, e)
	}
	if w, g := snapshot(t, src, DefaultDirs), snapshot(t, dst, DefaultDirs); !mapsEqual(w, g) {
		t.Errorf("restored %v, want %v", g, w)
	}
	// Another engine version has no cache.
	other := key
	other.Engine = "5.4"
	if _, _, err := c.Restore(t.Context(), other, opened(t, dst)); !errors.Is(err, ErrNoCache) {
		t.Errorf("Restore of another engine = %v, want ErrNoCache", err)
	}
	if _, err := os.Stat(filepath.Join(dst, "Intermediate", "Build", "a.o")); err != nil {
		t.Errorf("with no cache, the directories must stay as they are: %v", err)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestRestoreBrokenCacheLeavesNoDirs(t *testing.T) {
	c := newTestCache(t)
	key := validKey()
	obj, _ := ObjectKey(key, kiln.NewID())
	c.putObject(t, obj, 1000, time.Now()) // zeros: not an archive
	root := projectWith(t, "local")
	e, _, err := c.Restore(t.Context(), key, opened(t, root))
	if err == nil || errors.Is(err, ErrNoCache) {
		t.Fatalf("Restore of a broken cache = %v, want an error that is not ErrNoCache", err)
	}
	if e.ObjectKey != obj {
		t.Errorf("Restore reports %q, want the broken object %q", e.ObjectKey, obj)
	}
	for _, d := range DefaultDirs {
		if _, err := os.Stat(filepath.Join(root, d)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s left after a broken restore: %v", d, err)
		}
	}
}

func TestLatestPicksNewest(t *testing.T) {
	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	ids := []string{kiln.NewID(), kiln.NewID(), kiln.NewID(), kiln.NewID()}
	tests := []struct {
		name  string
		times []time.Duration // of ids[i]
		want  int
	}{
		{"in id order", []time.Duration{0, 1 * time.Minute, 2 * time.Minute, 3 * time.Minute}, 3},
		{"newest has the smallest id", []time.Duration{10 * time.Minute, 1 * time.Minute, 2 * time.Minute, 3 * time.Minute}, 0},
		{"newest in the middle", []time.Duration{0, 5 * time.Minute, 2 * time.Minute, 3 * time.Minute}, 1},
		{"same time: the larger id", []time.Duration{0, 0, time.Minute, time.Minute}, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newTestCache(t)
			key := validKey()
			for i, id := range ids {
				obj, _ := ObjectKey(key, id)
				c.putObject(t, obj, 10+i, base.Add(tc.times[i]))
			}
			// Objects that are not caches of key are ignored.
			other := key
			other.Ref = "other"
			obj, _ := ObjectKey(other, kiln.NewID())
			c.putObject(t, obj, 1, base.Add(time.Hour))
			c.putObject(t, key.Prefix()+"notes.txt", 1, base.Add(time.Hour))
			c.putObject(t, key.Prefix()+"nested/"+kiln.NewID()+".tar.zst", 1, base.Add(time.Hour))
			e, ok, err := c.Latest(t.Context(), key)
			if err != nil || !ok {
				t.Fatalf("Latest = %v, %v", ok, err)
			}
			if e.BuildID != ids[tc.want] || e.Size != int64(10+tc.want) || !e.ModTime.Equal(base.Add(tc.times[tc.want])) {
				t.Errorf("Latest = %+v, want build %d (%s)", e, tc.want, ids[tc.want])
			}
		})
	}
	c := newTestCache(t)
	if _, ok, err := c.Latest(t.Context(), validKey()); ok || err != nil {
		t.Errorf("Latest of an empty store = %v, %v", ok, err)
	}
	if _, _, err := c.Latest(t.Context(), Key{}); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("Latest of an invalid key = %v", err)
	}
}

// Save removes the older caches of its key, keeps a newer one (a concurrent save) and those of
// other keys.
func TestSaveRemovesOlderCaches(t *testing.T) {
	c := newTestCache(t)
	key := validKey()
	now := time.Now()
	older1, _ := ObjectKey(key, kiln.NewID())
	older2, _ := ObjectKey(key, kiln.NewID())
	c.putObject(t, older1, 5, now.Add(-2*time.Hour))
	c.putObject(t, older2, 5, now.Add(-time.Hour))
	newer, _ := ObjectKey(key, kiln.NewID())
	c.putObject(t, newer, 5, now.Add(time.Hour))
	other := key
	other.Platform = "Linux"
	otherObj, _ := ObjectKey(other, kiln.NewID())
	c.putObject(t, otherObj, 5, now.Add(-3*time.Hour))

	e, _, err := c.Save(t.Context(), key, kiln.NewID(), opened(t, projectWith(t, "v2")))
	if err != nil {
		t.Fatal(err)
	}
	infos, err := c.store.List(t.Context(), OrgPrefix(key.Org))
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, in := range infos {
		keys = append(keys, in.Key)
	}
	want := []string{e.ObjectKey, newer, otherObj}
	slices.Sort(want)
	if !slices.Equal(keys, want) {
		t.Errorf("after Save: %v, want %v", keys, want)
	}
}

func TestEvictOldestFirst(t *testing.T) {
	base := time.Now().Add(-time.Hour)
	type obj struct {
		size int
		age  time.Duration // before now
	}
	objs := []obj{{100, 50 * time.Minute}, {200, 40 * time.Minute}, {300, 30 * time.Minute}, {400, 20 * time.Minute}}
	tests := []struct {
		name     string
		maxBytes int64
		keep     int // index of the object to keep; -1 none
		removed  []int
	}{
		{"under the cap", 1000, -1, nil},
		{"remove one", 900, -1, []int{0}},
		{"remove two", 700, -1, []int{0, 1}},
		{"keep the oldest", 700, 0, []int{1, 2}},
		{"zero cap keeps the saved one", 0, 3, []int{0, 1, 2}},
		{"zero cap", 0, -1, []int{0, 1, 2, 3}},
		{"saved alone over the cap", 100, 3, []int{0, 1, 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newTestCache(t)
			org := kiln.NewID()
			// Made newest first, so that build ids (and keys) sort the other way round from age.
			keys := make([]string, len(objs))
			for i := len(objs) - 1; i >= 0; i-- {
				k := validKey()
				k.Org = org
				if i%2 == 1 {
					k.Project = kiln.NewID() // Evict works across keys and projects of the org
				}
				obj, _ := ObjectKey(k, kiln.NewID())
				c.putObject(t, obj, objs[i].size, base.Add(time.Hour-objs[i].age))
				keys[i] = obj
			}
			// Another org's cache is neither counted nor removed.
			stranger := validKey()
			strangerObj, _ := ObjectKey(stranger, kiln.NewID())
			c.putObject(t, strangerObj, 10_000, base.Add(-time.Hour))
			keep := ""
			if tc.keep >= 0 {
				keep = keys[tc.keep]
			}
			removed, err := c.Evict(t.Context(), org, tc.maxBytes, keep)
			if err != nil {
				t.Fatal(err)
			}
			var got, want []string
			for _, e := range removed {
				got = append(got, e.ObjectKey)
			}
			for _, i := range tc.removed {
				want = append(want, keys[i])
			}
			if !slices.Equal(got, want) {
				t.Errorf("removed %v, want %v", got, want)
			}
			u, err := c.Usage(t.Context(), org)
			if err != nil {
				t.Fatal(err)
			}
			var wantBytes int64
			for i, o := range objs {
				if !slices.Contains(tc.removed, i) {
					wantBytes += int64(o.size)
				}
			}
			if u.Bytes != wantBytes || u.Count != len(objs)-len(tc.removed) {
				t.Errorf("Usage after Evict = %+v, want %d bytes in %d", u, wantBytes, len(objs)-len(tc.removed))
			}
			if _, err := c.store.Open(t.Context(), strangerObj); err != nil {
				t.Errorf("another org's cache: %v", err)
			}
		})
	}
	c := newTestCache(t)
	if _, err := c.Evict(t.Context(), kiln.NewID(), -1, ""); err == nil {
		t.Error("Evict with a negative cap succeeded")
	}
	if _, err := c.Evict(t.Context(), "bad/org", 0, ""); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("Evict of a bad org = %v", err)
	}
}

func TestDeleteProject(t *testing.T) {
	c := newTestCache(t)
	a := validKey()
	b := a
	b.Project = kiln.NewID()
	for _, k := range []Key{a, a, b} {
		if _, _, err := c.Save(t.Context(), k, kiln.NewID(), opened(t, projectWith(t, "x"))); err != nil {
			t.Fatal(err)
		}
		k.Ref = "release"
		if _, _, err := c.Save(t.Context(), k, kiln.NewID(), opened(t, projectWith(t, "x"))); err != nil {
			t.Fatal(err)
		}
	}
	n, err := c.DeleteProject(t.Context(), a.Org, a.Project)
	if err != nil || n != 2 {
		t.Fatalf("DeleteProject = %d, %v; want 2 (one cache per ref)", n, err)
	}
	if _, ok, _ := c.Latest(t.Context(), a); ok {
		t.Error("a cache of the deleted project is left")
	}
	if _, ok, _ := c.Latest(t.Context(), b); !ok {
		t.Error("the other project's cache was deleted")
	}
	if u, _ := c.Usage(t.Context(), a.Org); u.Count != 2 {
		t.Errorf("Usage after DeleteProject = %+v, want the other project's 2", u)
	}
	if _, err := c.DeleteProject(t.Context(), a.Org, "x/.."); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("DeleteProject of a bad project id = %v", err)
	}
}

func TestSavedOfAMissingObject(t *testing.T) {
	c := newTestCache(t)
	if _, err := c.Saved(t.Context(), validKey(), kiln.NewID()); !errors.Is(err, ErrNotStored) {
		t.Errorf("Saved of a cache never uploaded = %v, want ErrNotStored", err)
	}
}

// replacingStore stores a newer cache of the key, and removes the one being saved, right after
// each Put: what a concurrent Save of a newer build does.
type replacingStore struct {
	*fsartifacts.Store
	t   *testing.T
	key Key
}

func (s replacingStore) Put(ctx context.Context, key string, write func(w io.Writer) error) error {
	if err := s.Store.Put(ctx, key, write); err != nil {
		return err
	}
	newer, _ := ObjectKey(s.key, kiln.NewID())
	if err := s.Store.Put(ctx, newer, func(w io.Writer) error { _, err := w.Write([]byte("newer")); return err }); err != nil {
		return err
	}
	return s.Store.Delete(ctx, key)
}

// A Save whose cache a newer concurrent Save already replaced succeeds: the newer cache serves.
func TestSaveReplacedByANewerSave(t *testing.T) {
	key := validKey()
	s, err := fsartifacts.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(replacingStore{Store: s, t: t, key: key}, nil)
	if err != nil {
		t.Fatal(err)
	}
	build := kiln.NewID()
	e, _, err := c.Save(t.Context(), key, build, opened(t, projectWith(t, "x")))
	if err != nil {
		t.Fatalf("Save = %v", err)
	}
	if e.BuildID != build || e.Size == 0 {
		t.Errorf("Save = %+v, want build %s with its size", e, build)
	}
	latest, ok, err := c.Latest(t.Context(), key)
	if err != nil || !ok || latest.BuildID == build {
		t.Errorf("Latest = %+v, %v, %v; want the newer cache", latest, ok, err)
	}
}

func TestSaveSkipsASymlinkedDir(t *testing.T) {
	c := newTestCache(t)
	root := projectWith(t, "x")
	elsewhere := t.TempDir()
	makeTree(t, elsewhere, []node{{name: "secret", mode: 0o600, modTime: t1, data: []byte("secret")}})
	if err := os.RemoveAll(filepath.Join(root, "DerivedDataCache")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(root, "DerivedDataCache")); err != nil {
		t.Fatal(err)
	}
	_, st, err := c.Save(t.Context(), validKey(), kiln.NewID(), opened(t, root))
	if err != nil {
		t.Fatal(err)
	}
	if st.Files != 1 || st.Skipped != 1 {
		t.Errorf("Save stats %+v, want only Intermediate's file and the symlinked dir skipped", st)
	}
}

func TestDeleteKey(t *testing.T) {
	c := newTestCache(t)
	a := validKey()
	other := a
	other.Ref = "release"
	for _, k := range []Key{a, other} {
		if _, _, err := c.Save(t.Context(), k, kiln.NewID(), opened(t, projectWith(t, "x"))); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := c.DeleteKey(t.Context(), a); err != nil || n != 1 {
		t.Fatalf("DeleteKey = %d, %v; want 1", n, err)
	}
	if _, ok, _ := c.Latest(t.Context(), a); ok {
		t.Error("the key's cache is left")
	}
	if _, ok, _ := c.Latest(t.Context(), other); !ok {
		t.Error("another ref's cache was deleted")
	}
}
