package artifactstest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/artifacts"
)

// ListStore is a store that can also list its artifacts by key prefix.
type ListStore interface {
	artifacts.Store
	List(ctx context.Context, prefix string) ([]artifacts.Info, error)
}

// RunList tests the listing of the store that newStore returns; each subtest gets a new, empty
// one.
func RunList(t *testing.T, newStore func(t *testing.T) ListStore) {
	t.Run("ListPrefixes", func(t *testing.T) { testListPrefixes(t, newStore(t)) })
	t.Run("ListSizesAndTimes", func(t *testing.T) { testListSizesAndTimes(t, newStore(t)) })
	t.Run("ListAfterDelete", func(t *testing.T) { testListAfterDelete(t, newStore(t)) })
	t.Run("ListSkipsUnfinishedPut", func(t *testing.T) { testListSkipsUnfinishedPut(t, newStore(t)) })
	t.Run("ListMany", func(t *testing.T) { testListMany(t, newStore(t)) })
	t.Run("ListBadPrefixes", func(t *testing.T) { testListBadPrefixes(t, newStore(t)) })
}

func listKeys(t *testing.T, s ListStore, prefix string) []string {
	t.Helper()
	infos, err := s.List(t.Context(), prefix)
	if err != nil {
		t.Fatalf("List(%q): %v", prefix, err)
	}
	keys := []string{}
	for _, in := range infos {
		keys = append(keys, in.Key)
	}
	return keys
}

func testListPrefixes(t *testing.T, s ListStore) {
	if got := listKeys(t, s, ""); len(got) != 0 {
		t.Fatalf("List of an empty store = %v", got)
	}
	all := []string{
		"caches/k1/p1/h/b2.tar.zst",
		"caches/k1/p1/h/b1.tar.zst",
		"caches/k1/p2/h/b3.tar.zst",
		"caches/k10/p1/h/b4.tar.zst",
		"caches/k1x",
		"other/k1/p1/h/b5.tar.zst",
		"top.tar.gz",
	}
	for i, k := range all {
		put(t, s, k, []byte{byte(i)})
	}
	for _, tc := range []struct {
		prefix string
		want   []string
	}{
		{"", []string{"caches/k1/p1/h/b1.tar.zst", "caches/k1/p1/h/b2.tar.zst", "caches/k1/p2/h/b3.tar.zst", "caches/k10/p1/h/b4.tar.zst", "caches/k1x", "other/k1/p1/h/b5.tar.zst", "top.tar.gz"}},
		{"caches/k1/", []string{"caches/k1/p1/h/b1.tar.zst", "caches/k1/p1/h/b2.tar.zst", "caches/k1/p2/h/b3.tar.zst"}},
		{"caches/k1", []string{"caches/k1/p1/h/b1.tar.zst", "caches/k1/p1/h/b2.tar.zst", "caches/k1/p2/h/b3.tar.zst", "caches/k10/p1/h/b4.tar.zst", "caches/k1x"}},
		{"caches/k1/p1/h/b", []string{"caches/k1/p1/h/b1.tar.zst", "caches/k1/p1/h/b2.tar.zst"}},
		{"caches/k1/p1/h/b2.tar.zst", []string{"caches/k1/p1/h/b2.tar.zst"}},
		{"caches/k2/", []string{}},
		{"t", []string{"top.tar.gz"}},
		{"top.tar.gz/", []string{}}, // an artifact is not a directory
		{"nothing/here/", []string{}},
	} {
		if got := listKeys(t, s, tc.prefix); !slices.Equal(got, tc.want) {
			t.Errorf("List(%q) = %v, want %v", tc.prefix, got, tc.want)
		}
	}
}

func testListSizesAndTimes(t *testing.T, s ListStore) {
	before := time.Now().Add(-2 * time.Second)
	put(t, s, "k/a.tar.gz", Content(12345, 3))
	put(t, s, "k/b.tar.gz", nil)
	infos, err := s.List(t.Context(), "k/")
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 2 || infos[0].Size != 12345 || infos[1].Size != 0 {
		t.Fatalf("List = %+v, want a.tar.gz of 12345 bytes and b.tar.gz of 0", infos)
	}
	for _, in := range infos {
		obj, err := s.Open(t.Context(), in.Key)
		if err != nil {
			t.Fatal(err)
		}
		obj.Close()
		if in.ModTime.Before(before) || in.ModTime.After(time.Now().Add(2*time.Second)) {
			t.Errorf("%s: ModTime %v, want about now", in.Key, in.ModTime)
		}
		// S3 lists times in milliseconds but HEAD answers in seconds.
		if !in.ModTime.Truncate(time.Second).Equal(obj.ModTime().Truncate(time.Second)) {
			t.Errorf("%s: listed ModTime %v, Open says %v", in.Key, in.ModTime, obj.ModTime())
		}
	}
}

func testListAfterDelete(t *testing.T, s ListStore) {
	put(t, s, "k/a.tar.gz", []byte("a"))
	put(t, s, "k/b.tar.gz", []byte("b"))
	if err := s.Delete(t.Context(), "k/a.tar.gz"); err != nil {
		t.Fatal(err)
	}
	if got := listKeys(t, s, "k/"); !slices.Equal(got, []string{"k/b.tar.gz"}) {
		t.Errorf("List after Delete = %v, want [k/b.tar.gz]", got)
	}
}

func testListSkipsUnfinishedPut(t *testing.T, s ListStore) {
	put(t, s, "k/done.tar.gz", []byte("done"))
	var during []string
	err := s.Put(t.Context(), "k/writing.tar.gz", func(w io.Writer) error {
		if _, err := w.Write(Content(1<<20, 4)); err != nil {
			return err
		}
		during = listKeys(t, s, "k/")
		return errors.New("stop")
	})
	if err == nil {
		t.Fatal("Put whose writer failed succeeded")
	}
	if !slices.Equal(during, []string{"k/done.tar.gz"}) {
		t.Errorf("List while writing = %v, want only k/done.tar.gz", during)
	}
	if got := listKeys(t, s, "k/"); !slices.Equal(got, []string{"k/done.tar.gz"}) {
		t.Errorf("List after the failed Put = %v, want only k/done.tar.gz", got)
	}
}

// More keys than one S3 listing page (1000) holds.
func testListMany(t *testing.T, s ListStore) {
	const n = 1100
	var want []string
	for i := range n {
		k := fmt.Sprintf("many/k%04d.tar.zst", i)
		put(t, s, k, []byte("x"))
		want = append(want, k)
	}
	put(t, s, "manx.tar.zst", []byte("not under many/"))
	if got := listKeys(t, s, "many/"); !slices.Equal(got, want) {
		t.Errorf("List(many/) = %d keys, want %d in order", len(got), len(want))
	}
}

func testListBadPrefixes(t *testing.T, s ListStore) {
	for _, p := range []string{"/abs", "a//b", "a/../b", "a/.", "a b", `a\b`} {
		if _, err := s.List(t.Context(), p); !errors.Is(err, artifacts.ErrInvalidKey) {
			t.Errorf("List(%q) = %v, want ErrInvalidKey", p, err)
		}
	}
}
