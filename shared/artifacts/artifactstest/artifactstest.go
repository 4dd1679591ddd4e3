// Package artifactstest is the contract test suite of artifacts.Store: every implementation
// runs Run.
package artifactstest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/artifacts"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// Run tests the store that newStore returns; each subtest gets a new, empty one.
func Run(t *testing.T, newStore func(t *testing.T) artifacts.Store) {
	t.Run("PutOpenRead", func(t *testing.T) { testPutOpenRead(t, newStore(t)) })
	t.Run("Seek", func(t *testing.T) { testSeek(t, newStore(t)) })
	t.Run("Empty", func(t *testing.T) { testEmpty(t, newStore(t)) })
	t.Run("Replace", func(t *testing.T) { testReplace(t, newStore(t)) })
	t.Run("InvisibleWhileWriting", func(t *testing.T) { testInvisibleWhileWriting(t, newStore(t)) })
	t.Run("WriteError", func(t *testing.T) { testWriteError(t, newStore(t)) })
	t.Run("Cancelled", func(t *testing.T) { testCancelled(t, newStore(t)) })
	t.Run("Delete", func(t *testing.T) { testDelete(t, newStore(t)) })
	t.Run("Missing", func(t *testing.T) { testMissing(t, newStore(t)) })
	t.Run("ConcurrentPuts", func(t *testing.T) { testConcurrentPuts(t, newStore(t)) })
	t.Run("BadKeys", func(t *testing.T) { testBadKeys(t, newStore(t)) })
}

// Content returns n deterministic pseudo-random bytes.
func Content(n int, seed uint64) []byte {
	b := make([]byte, n)
	_, _ = rand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8)}).Read(b)
	return b
}

// put stores data under key, written in pieces as a packager would.
func put(t *testing.T, s artifacts.Store, key string, data []byte) {
	t.Helper()
	err := s.Put(t.Context(), key, func(w io.Writer) error {
		for p := data; len(p) > 0; {
			n := min(len(p), 100_000)
			if _, err := w.Write(p[:n]); err != nil {
				return err
			}
			p = p[n:]
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Put(%q): %v", key, err)
	}
}

// readBack opens key and returns its object's size and all its bytes.
func readBack(t *testing.T, s artifacts.Store, key string) (int64, []byte) {
	t.Helper()
	obj, err := s.Open(t.Context(), key)
	if err != nil {
		t.Fatalf("Open(%q): %v", key, err)
	}
	defer obj.Close()
	data, err := io.ReadAll(obj)
	if err != nil {
		t.Fatalf("read %q: %v", key, err)
	}
	return obj.Size(), data
}

func wantContent(t *testing.T, s artifacts.Store, key string, want []byte) {
	t.Helper()
	size, got := readBack(t, s, key)
	if size != int64(len(want)) || !bytes.Equal(got, want) {
		t.Errorf("%q: size %d, %d bytes read, want %d (equal: %v)", key, size, len(got), len(want), bytes.Equal(got, want))
	}
}

func wantNotFound(t *testing.T, s artifacts.Store, key string) {
	t.Helper()
	obj, err := s.Open(t.Context(), key)
	if err == nil {
		obj.Close()
		t.Fatalf("Open(%q) found an artifact, want not_found", key)
	}
	if !kiln.IsCode(err, kiln.ENotFound) {
		t.Fatalf("Open(%q) = %v, want not_found", key, err)
	}
}

func testPutOpenRead(t *testing.T, s artifacts.Store) {
	before := time.Now().Add(-2 * time.Second)
	data := Content(3<<20+17, 1)
	put(t, s, "korg1/bbuild1.tar.gz", data)
	wantContent(t, s, "korg1/bbuild1.tar.gz", data)
	obj, err := s.Open(t.Context(), "korg1/bbuild1.tar.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	if mt := obj.ModTime(); mt.Before(before) || mt.After(time.Now().Add(2*time.Second)) {
		t.Errorf("ModTime %v, want about now", mt)
	}
	// Keys of several depths and a key without a directory.
	put(t, s, "top.tar.gz", []byte("top"))
	put(t, s, "a/b/c/d.tar.gz", []byte("deep"))
	wantContent(t, s, "top.tar.gz", []byte("top"))
	wantContent(t, s, "a/b/c/d.tar.gz", []byte("deep"))
}

func testSeek(t *testing.T, s artifacts.Store) {
	data := Content(1<<20, 2)
	put(t, s, "k/seek.tar.gz", data)
	obj, err := s.Open(t.Context(), "k/seek.tar.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	for _, tc := range []struct {
		offset int64
		whence int
		want   int64
	}{
		{1000, io.SeekStart, 1000},
		{500, io.SeekCurrent, 1000 + 64 + 500}, // after reading 64 bytes at 1000
		{-100, io.SeekEnd, int64(len(data)) - 100},
		{0, io.SeekStart, 0},
	} {
		pos, err := obj.Seek(tc.offset, tc.whence)
		if err != nil || pos != tc.want {
			t.Fatalf("Seek(%d, %d) = %d, %v; want %d", tc.offset, tc.whence, pos, err, tc.want)
		}
		buf := make([]byte, 64)
		n, err := io.ReadFull(obj, buf)
		if err != nil || !bytes.Equal(buf[:n], data[pos:pos+int64(n)]) {
			t.Fatalf("read at %d: %d bytes, %v, equal %v", pos, n, err, bytes.Equal(buf[:n], data[pos:pos+int64(n)]))
		}
	}
	if pos, err := obj.Seek(0, io.SeekEnd); err != nil || pos != int64(len(data)) {
		t.Fatalf("Seek(0, end) = %d, %v", pos, err)
	}
	if n, err := obj.Read(make([]byte, 10)); n != 0 || err != io.EOF {
		t.Errorf("read at end = %d, %v; want 0, EOF", n, err)
	}
}

func testEmpty(t *testing.T, s artifacts.Store) {
	if err := s.Put(t.Context(), "k/empty.tar.gz", func(io.Writer) error { return nil }); err != nil {
		t.Fatal(err)
	}
	wantContent(t, s, "k/empty.tar.gz", nil)
}

func testReplace(t *testing.T, s artifacts.Store) {
	put(t, s, "k/r.tar.gz", Content(5000, 3))
	put(t, s, "k/r.tar.gz", []byte("second"))
	wantContent(t, s, "k/r.tar.gz", []byte("second"))
}

func testInvisibleWhileWriting(t *testing.T, s artifacts.Store) {
	err := s.Put(t.Context(), "k/w.tar.gz", func(w io.Writer) error {
		if _, err := w.Write(Content(1<<20, 4)); err != nil {
			return err
		}
		wantNotFound(t, s, "k/w.tar.gz")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	wantContent(t, s, "k/w.tar.gz", Content(1<<20, 4))
}

func testWriteError(t *testing.T, s artifacts.Store) {
	boom := errors.New("packaging failed")
	failAfter := func(w io.Writer) error {
		if _, err := w.Write(Content(2<<20, 5)); err != nil {
			return err
		}
		return boom
	}
	if err := s.Put(t.Context(), "k/fail.tar.gz", failAfter); !errors.Is(err, boom) {
		t.Fatalf("Put = %v, want the write error", err)
	}
	wantNotFound(t, s, "k/fail.tar.gz")
	// A failed Put leaves an artifact stored before under the key as it was.
	put(t, s, "k/kept.tar.gz", []byte("kept"))
	if err := s.Put(t.Context(), "k/kept.tar.gz", failAfter); !errors.Is(err, boom) {
		t.Fatalf("Put = %v, want the write error", err)
	}
	wantContent(t, s, "k/kept.tar.gz", []byte("kept"))
}

func testCancelled(t *testing.T, s artifacts.Store) {
	ctx, cancel := context.WithCancel(t.Context())
	err := s.Put(ctx, "k/c.tar.gz", func(w io.Writer) error {
		if _, err := w.Write([]byte("some")); err != nil {
			return err
		}
		cancel()
		return nil // the writer did not notice; the store must
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Put = %v, want context.Canceled", err)
	}
	wantNotFound(t, s, "k/c.tar.gz")
}

func testDelete(t *testing.T, s artifacts.Store) {
	put(t, s, "k/d.tar.gz", []byte("d"))
	put(t, s, "k/other.tar.gz", []byte("other"))
	for range 2 { // deleting twice is fine
		if err := s.Delete(t.Context(), "k/d.tar.gz"); err != nil {
			t.Fatalf("Delete: %v", err)
		}
		wantNotFound(t, s, "k/d.tar.gz")
	}
	wantContent(t, s, "k/other.tar.gz", []byte("other"))
	if err := s.Delete(t.Context(), "never/stored.tar.gz"); err != nil {
		t.Fatalf("Delete of a missing artifact: %v", err)
	}
}

func testMissing(t *testing.T, s artifacts.Store) {
	wantNotFound(t, s, "k/missing.tar.gz")
	put(t, s, "k/sub/x.tar.gz", []byte("x"))
	wantNotFound(t, s, "k/sub")                 // a prefix of a key is no artifact
	wantNotFound(t, s, "k/sub/x.tar.gz/deeper") // nor is a path below one
}

func testConcurrentPuts(t *testing.T, s artifacts.Store) {
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			data := Content(256<<10+i, uint64(100+i))
			errs[i] = s.Put(t.Context(), fmt.Sprintf("k%d/b.tar.gz", i%3)+fmt.Sprint(i), func(w io.Writer) error {
				for p := data; len(p) > 0; p = p[min(len(p), 4096):] {
					if _, err := w.Write(p[:min(len(p), 4096)]); err != nil {
						return err
					}
				}
				return nil
			})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Put %d: %v", i, err)
		}
		wantContent(t, s, fmt.Sprintf("k%d/b.tar.gz", i%3)+fmt.Sprint(i), Content(256<<10+i, uint64(100+i)))
	}
}

func testBadKeys(t *testing.T, s artifacts.Store) {
	for _, key := range []string{
		"", "/abs/x.tar.gz", "../x.tar.gz", "k/../../x", "k/..", "..", ".", "./x", "k//x", "k/",
		"k/.partial-123", ".hidden", `k\x`, "k x", "k/ü.tar.gz", "k:x", "k\x00", string(make([]byte, 1025)),
	} {
		called := false
		err := s.Put(t.Context(), key, func(w io.Writer) error { called = true; return nil })
		if !errors.Is(err, artifacts.ErrInvalidKey) || called {
			t.Errorf("Put(%q) = %v (write called: %v), want ErrInvalidKey", key, err, called)
		}
		if obj, err := s.Open(t.Context(), key); !errors.Is(err, artifacts.ErrInvalidKey) {
			if err == nil {
				obj.Close()
			}
			t.Errorf("Open(%q) = %v, want ErrInvalidKey", key, err)
		}
		if err := s.Delete(t.Context(), key); !errors.Is(err, artifacts.ErrInvalidKey) {
			t.Errorf("Delete(%q) = %v, want ErrInvalidKey", key, err)
		}
	}
}
