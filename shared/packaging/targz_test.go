package packaging

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"io"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"
)

func TestTarGzRoundTrip(t *testing.T) {
	mtime := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	text := []byte(strings.Repeat("[/Script/Engine.RendererSettings]\nr.DefaultFeature.Bloom=True\n", 3000))
	tests := []struct {
		name    string
		entries []entry
		maxSize int64 // of the output; 0: any
	}{
		{"empty dir", nil, 0},
		{"zero-byte file", []entry{{name: "empty.txt", typ: tar.TypeReg, mode: 0o644}}, 0},
		{"small files", []entry{
			{name: "Game/Config/DefaultEngine.ini", typ: tar.TypeReg, mode: 0o644, content: text, mtime: mtime},
			{name: "Game/Binaries/Linux/Game", typ: tar.TypeReg, mode: 0o755, content: []byte("\x7fELF..."), mtime: mtime},
			{name: "Game.sh", typ: tar.TypeReg, mode: 0o755, content: []byte("#!/bin/sh\nexec Game/Binaries/Linux/Game \"$@\"\n")},
		}, 0},
		{"dirs and symlinks", []entry{
			{name: "Engine/Content", typ: tar.TypeDir, mode: 0o750},
			{name: "Engine/Empty", typ: tar.TypeDir, mode: 0o755},
			{name: "Game/Binaries/Linux/libGame.so", typ: tar.TypeReg, mode: 0o755, content: text[:1000]},
			{name: "Game/Binaries/Linux/libGame.so.1", typ: tar.TypeSymlink, target: "libGame.so"},
			{name: "Game/Dangling", typ: tar.TypeSymlink, target: "../nowhere"},
			{name: "Game/ReadOnly.txt", typ: tar.TypeReg, mode: 0o444, content: []byte("ro")},
		}, 0},
		// Stored: at most 0.1% more than the data.
		{"20 MB random pak", []entry{{name: "Game/Content/Paks/Game-Linux.pak", typ: tar.TypeReg, mode: 0o644, content: randomBytes(20<<20, 1)}}, 20<<20 + 20<<10},
		{"20 MB random, unknown extension", []entry{{name: "Game/Data.bin", typ: tar.TypeReg, mode: 0o644, content: randomBytes(20<<20, 2)}}, 20<<20 + 20<<10},
		// Deflated, whatever the name says.
		{"20 MB zeros", []entry{{name: "Game/Zero.dat", typ: tar.TypeReg, mode: 0o644, content: make([]byte, 20<<20)}}, 64 << 10},
		{"20 MB zeros named .pak", []entry{{name: "Game/Content/Paks/Uncompressed.pak", typ: tar.TypeReg, mode: 0o644, content: make([]byte, 20<<20)}}, 64 << 10},
		{"mixed", mixedEntries(), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeTree(t, dir, tt.entries)
			data, res := packageTree(t, dir, "MyGame-Linux-Shipping")

			if tt.maxSize > 0 && res.Size > tt.maxSize {
				t.Errorf("output is %d bytes, want at most %d", res.Size, tt.maxSize)
			}
			sum := md5.Sum(data)
			if res.Size != int64(len(data)) || res.MD5 != hex.EncodeToString(sum[:]) {
				t.Errorf("Result size %d md5 %s, want %d %x", res.Size, res.MD5, len(data), sum)
			}
			want := expectedEntries(t, dir)
			got := readArchive(t, data)
			files := 0
			for _, e := range want {
				if e.typ != tar.TypeDir {
					files++
				}
			}
			if res.Files != files {
				t.Errorf("Files = %d, want %d", res.Files, files)
			}
			compareEntries(t, got, want)
			if names := listWithTar(t, data); strings.Join(names, "\n") != strings.Join(entryNames(want), "\n") {
				t.Errorf("tar -tzf lists\n%s\nwant\n%s", strings.Join(names, "\n"), strings.Join(entryNames(want), "\n"))
			}
			gzipTest(t, data)
		})
	}
}

func TestTarGzDeterministic(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, mixedEntries())
	a, _ := packageTree(t, dir, "G")
	b, _ := packageTree(t, dir, "G")
	if !bytes.Equal(a, b) {
		t.Error("two runs over the same tree differ")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	if c, _ := packageTree(t, dir, "G"); !bytes.Equal(a, c) {
		t.Error("the output depends on the number of CPUs")
	}
	got := entryNames(readArchive(t, a))
	if !sort.StringsAreSorted(got) {
		t.Errorf("entries not in sorted order: %v", got)
	}
}

func TestTarGzCancel(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, []entry{
		{name: "a.pak", typ: tar.TypeReg, mode: 0o644, content: randomBytes(64<<20, 4)},
		{name: "b.txt", typ: tar.TypeReg, mode: 0o644, content: []byte("b")},
	})
	t.Run("before", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if _, err := TarGz(ctx, dir, "G", io.Discard); !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	})
	t.Run("within a large file", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		w := &cancelAfter{n: 8 << 20, cancel: cancel}
		_, err := TarGz(ctx, dir, "G", w)
		if err != context.Canceled {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		if w.written > 40<<20 {
			t.Errorf("%d bytes written after cancelling at 8 MB", w.written)
		}
	})
}

// cancelAfter cancels once n bytes were written to it.
type cancelAfter struct {
	n, written int
	cancel     func()
}

func (w *cancelAfter) Write(p []byte) (int, error) {
	w.written += len(p)
	if w.written >= w.n {
		w.cancel()
	}
	return len(p), nil
}

func TestTarGzWriteError(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, []entry{{name: "a.pak", typ: tar.TypeReg, mode: 0o644, content: randomBytes(16<<20, 5)}})
	boom := errors.New("disk full")
	_, err := TarGz(t.Context(), dir, "G", failingWriter{boom})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want %v", err, boom)
	}
}

type failingWriter struct{ err error }

func (w failingWriter) Write([]byte) (int, error) { return 0, w.err }

func TestHintFor(t *testing.T) {
	tests := []struct {
		name string
		size int64
		want hint
	}{
		{"G/Content/Paks/pakchunk0-Linux.pak", 1 << 30, hintStore},
		{"G/Content/Paks/global.UCAS", 1 << 20, hintStore},
		{"G/Movies/Intro.bk2", 100 << 20, hintStore},
		{"G/Content/Paks/tiny.pak", 1000, hintDeflate},
		{"G/Binaries/Linux/Game-Linux-Shipping", 200 << 20, hintAuto},
		{"G/Binaries/Linux/Game.debug", 100 << 20, hintAuto},
		{"G/Config/DefaultGame.ini", 4000, hintDeflate},
	}
	for _, tt := range tests {
		if got := hintFor(tt.name, tt.size); got != tt.want {
			t.Errorf("hintFor(%q, %d) = %d, want %d", tt.name, tt.size, got, tt.want)
		}
	}
}

func TestTarGzBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, top := range []string{"", ".", "..", "a/b"} {
		if _, err := TarGz(t.Context(), dir, top, io.Discard); err == nil {
			t.Errorf("top-level name %q accepted", top)
		}
	}
	if _, err := TarGz(t.Context(), filepath.Join(dir, "missing"), "G", io.Discard); err == nil {
		t.Error("missing source directory accepted")
	}
}
