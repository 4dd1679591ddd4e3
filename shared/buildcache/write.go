package buildcache

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"

	"github.com/klauspost/compress/zstd"
)

// Stats counts what an archive held.
type Stats struct {
	Files int64 // regular files
	Dirs  int64 // directories
	Bytes int64 // bytes of file content (before compression)
	// Skipped counts what Write left out: symlinks, devices, sockets and pipes, and names Read
	// would refuse (with a backslash).
	Skipped int64
}

// Encoder settings: zstd's default level (about zstd -3), an 8 MiB window, and at most 4 blocks
// compressed at once, so an encoder holds some tens of MiB whatever the size of the tree.
const (
	encoderWindow      = 8 << 20
	maxEncoderThreads  = 4
	copyBufferSize     = 1 << 20
	decoderMaxWindow   = 64 << 20 // refuse frames asking for more memory than this
	decoderConcurrency = 2
)

// Write streams the cache archive of the directories dirs of root (such as DefaultDirs) into w:
// a tar of their regular files and directories, with modes and modification times, compressed
// with zstd. A missing directory is skipped; symlinks (a listed directory that is one too) and
// special files are left out (counted in Stats.Skipped), as are files whose names hold a
// backslash. Nothing is buffered beyond the
// encoder's window, so w may be an upload of any size. Write does not close w.
func Write(ctx context.Context, w io.Writer, root string, dirs []string) (Stats, error) {
	var st Stats
	if err := checkDirs(dirs); err != nil {
		return st, err
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return st, fmt.Errorf("build cache: project directory %s: not a directory (%v)", root, err)
	}
	enc, err := zstd.NewWriter(w,
		zstd.WithEncoderLevel(zstd.SpeedDefault),
		zstd.WithWindowSize(encoderWindow),
		zstd.WithEncoderConcurrency(min(runtime.GOMAXPROCS(0), maxEncoderThreads)),
	)
	if err != nil {
		return st, fmt.Errorf("build cache: zstd encoder: %w", err)
	}
	tw := tar.NewWriter(enc)
	buf := make([]byte, copyBufferSize)
	for _, d := range dirs {
		if err := writeDir(ctx, tw, root, d, buf, &st); err != nil {
			enc.Close()
			return st, err
		}
	}
	if err := tw.Close(); err != nil {
		enc.Close()
		return st, fmt.Errorf("build cache: write archive: %w", err)
	}
	if err := enc.Close(); err != nil {
		return st, fmt.Errorf("build cache: write archive: %w", err)
	}
	return st, nil
}

// writeDir adds the directory dir of root, and everything in it, in lexical order.
func writeDir(ctx context.Context, tw *tar.Writer, root, dir string, buf []byte, st *Stats) error {
	top := filepath.Join(root, filepath.FromSlash(dir))
	if fi, err := os.Lstat(top); errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return fmt.Errorf("build cache: %w", err)
	} else if fi.Mode()&fs.ModeSymlink != 0 { // symlinks are never kept, the directory's neither
		st.Skipped++
		return nil
	} else if !fi.IsDir() {
		return fmt.Errorf("build cache: %s is not a directory", top)
	}
	err := filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		name := filepath.ToSlash(rel)
		if !d.IsDir() && !d.Type().IsRegular() || !validName(name) {
			st.Skipped++
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		hdr := &tar.Header{Name: name, Mode: int64(fi.Mode().Perm()), ModTime: fi.ModTime(), Format: tar.FormatPAX}
		if d.IsDir() {
			hdr.Typeflag, hdr.Name = tar.TypeDir, name+"/"
			st.Dirs++
			return tw.WriteHeader(hdr)
		}
		hdr.Typeflag, hdr.Size = tar.TypeReg, fi.Size()
		return writeFile(ctx, tw, hdr, p, buf, st)
	})
	if err != nil {
		return fmt.Errorf("build cache: archive %s: %w", top, err)
	}
	return nil
}

func writeFile(ctx context.Context, tw *tar.Writer, hdr *tar.Header, p string, buf []byte, st *Stats) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	n, err := io.CopyBuffer(tw, io.LimitReader(ctxReader{ctx, f}, hdr.Size), buf)
	if err != nil {
		return err
	}
	if n != hdr.Size {
		return fmt.Errorf("%s shrank while being archived", p)
	}
	st.Files++
	st.Bytes += n
	return nil
}

// ctxReader fails reads once ctx is done, so that a long copy stops when cancelled.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (r ctxReader) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	return r.r.Read(p)
}
