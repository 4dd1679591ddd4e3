package buildcache

import (
	"archive/tar"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

// BenchmarkNoFollowCost times a save and a restore of a ~256 MiB tree through package nofollow
// (every directory checked as it is opened, nothing followed) against the path-based walk and
// os.Root extraction the cache used before (which followed links inside the project directory),
// alternately in the same run, and prints nofollow/paths for each.
func BenchmarkNoFollowCost(b *testing.B) {
	benchEnabled(b)
	dir := b.TempDir()
	src := filepath.Join(dir, "src")
	generateTree(b, src, 256<<20)
	archive := filepath.Join(dir, "cache.tar.zst")
	dst := filepath.Join(dir, "dst")
	if err := os.MkdirAll(dst, 0o755); err != nil {
		b.Fatal(err)
	}
	timed := func(f func(w io.Writer, r io.Reader) error, write bool) time.Duration {
		start := time.Now()
		var err error
		if write {
			var out *os.File
			if out, err = os.Create(archive); err == nil {
				err = f(out, nil)
				out.Close()
			}
		} else {
			var in *os.File
			if in, err = os.Open(archive); err == nil {
				err = f(nil, in)
				in.Close()
			}
		}
		if err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	var save, pathSave, restore, pathRestore time.Duration
	for b.Loop() {
		pathSave += timed(func(w io.Writer, _ io.Reader) error { return pathWrite(b.Context(), w, src) }, true)
		save += timed(func(w io.Writer, _ io.Reader) error {
			_, err := Write(b.Context(), w, opened(b, src), DefaultDirs)
			return err
		}, true)
		pathRestore += timed(func(_ io.Writer, r io.Reader) error { return pathRead(r, dst) }, false)
		restore += timed(func(_ io.Writer, r io.Reader) error {
			_, err := Read(b.Context(), r, opened(b, dst), DefaultDirs)
			return err
		}, false)
	}
	b.ReportMetric(save.Seconds()/pathSave.Seconds(), "save_nofollow/paths")
	b.ReportMetric(restore.Seconds()/pathRestore.Seconds(), "restore_nofollow/paths")
	fmt.Printf("  build cache of 256 MiB: save %.2fs (paths %.2fs, nofollow/paths %.2f)  restore %.2fs (paths %.2fs, nofollow/paths %.2f)\n",
		save.Seconds()/float64(b.N), pathSave.Seconds()/float64(b.N), save.Seconds()/pathSave.Seconds(),
		restore.Seconds()/float64(b.N), pathRestore.Seconds()/float64(b.N), restore.Seconds()/pathRestore.Seconds())
}

// pathWrite is the baseline save: the cache's archive made by walking paths (filepath.WalkDir,
// os.Open), as before package nofollow.
func pathWrite(ctx context.Context, w io.Writer, root string) error {
	enc, err := zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithWindowSize(encoderWindow))
	if err != nil {
		return err
	}
	tw := tar.NewWriter(enc)
	buf := make([]byte, copyBufferSize)
	for _, d := range DefaultDirs {
		err := filepath.WalkDir(filepath.Join(root, d), func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			fi, err := e.Info()
			if err != nil {
				return err
			}
			hdr := &tar.Header{Name: filepath.ToSlash(rel), Mode: int64(fi.Mode().Perm()), ModTime: fi.ModTime(), Format: tar.FormatPAX}
			if e.IsDir() {
				hdr.Typeflag, hdr.Name = tar.TypeDir, hdr.Name+"/"
				return tw.WriteHeader(hdr)
			}
			if !e.Type().IsRegular() {
				return nil
			}
			hdr.Typeflag, hdr.Size = tar.TypeReg, fi.Size()
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			defer f.Close()
			if err := tw.WriteHeader(hdr); err != nil {
				return err
			}
			_, err = io.CopyBuffer(tw, io.LimitReader(ctxReader{ctx, f}, hdr.Size), buf)
			return err
		})
		if err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return enc.Close()
}

// pathRead is the baseline restore: extraction by name through an os.Root of the project
// directory, as before package nofollow.
func pathRead(r io.Reader, root string) error {
	rt, err := os.OpenRoot(root)
	if err != nil {
		return err
	}
	defer rt.Close()
	for _, d := range DefaultDirs {
		if err := rt.RemoveAll(d); err != nil {
			return err
		}
	}
	dec, err := zstd.NewReader(r, zstd.WithDecoderMaxWindow(decoderMaxWindow), zstd.WithDecoderConcurrency(decoderConcurrency), zstd.WithDecoderLowmem(true))
	if err != nil {
		return err
	}
	defer dec.Close()
	tr := tar.NewReader(dec)
	buf := make([]byte, copyBufferSize)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		name := path.Clean(hdr.Name)
		if hdr.Typeflag == tar.TypeDir {
			if err := rt.MkdirAll(name, 0o755); err != nil {
				return err
			}
			continue
		}
		if err := rt.MkdirAll(path.Dir(name), 0o755); err != nil {
			return err
		}
		f, err := rt.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return err
		}
		_, err = io.CopyBuffer(f, tr, buf)
		if err == nil {
			err = f.Chmod(fs.FileMode(hdr.Mode).Perm())
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = rt.Chtimes(name, hdr.ModTime, hdr.ModTime)
		}
		if err != nil {
			return err
		}
	}
}
