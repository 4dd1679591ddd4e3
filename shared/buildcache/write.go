package buildcache

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"runtime"

	"github.com/klauspost/compress/zstd"

	"github.com/kilnbuild/kiln/shared/nofollow"
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

// Write streams the cache archive of the directories dirs of the project directory root (such
// as DefaultDirs) into w: a tar of their regular files and directories, with modes and
// modification times, compressed with zstd. Everything is opened through root without following
// a link (package nofollow): a missing directory is skipped; a link, whether a listed directory
// or anything in one, and special files (pipes, devices, sockets) are left out and counted in
// Stats.Skipped, as are files with several hard links (the other names may lie outside the
// directories) and names with a backslash. Nothing is buffered beyond the encoder's window, so w
// may be an upload of any size. Write does not close w.
func Write(ctx context.Context, w io.Writer, root *nofollow.Dir, dirs []string) (Stats, error) {
	var st Stats
	if err := checkDirs(dirs); err != nil {
		return st, err
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
	a := archiver{ctx: ctx, tw: tw, buf: make([]byte, copyBufferSize), st: &st}
	for _, d := range dirs {
		if err := a.top(root, d); err != nil {
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

// archiver adds directories, opened without following links, to a cache archive.
type archiver struct {
	ctx context.Context
	tw  *tar.Writer
	buf []byte
	st  *Stats
}

// top adds the listed directory dir of root, and everything in it, in lexical order.
func (a *archiver) top(root *nofollow.Dir, dir string) error {
	fi, err := root.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case errors.Is(err, nofollow.ErrSymlink) || err == nil && fi.Mode()&fs.ModeSymlink != 0:
		a.st.Skipped++ // symlinks are never kept, the directory's neither
		return nil
	case err != nil:
		return fmt.Errorf("build cache: %w", err)
	case !fi.IsDir():
		return fmt.Errorf("build cache: %s is not a directory", filepath.Join(root.Path(), dir))
	}
	d, err := root.OpenDir(dir)
	if err == nil {
		err = a.dir(d, dir, fi)
		d.Close()
	}
	if err != nil {
		return fmt.Errorf("build cache: archive %s: %w", filepath.Join(root.Path(), dir), err)
	}
	return nil
}

// dir adds the open directory d, named name in the archive, and what it holds.
func (a *archiver) dir(d *nofollow.Dir, name string, fi fs.FileInfo) error {
	if err := a.ctx.Err(); err != nil {
		return err
	}
	a.st.Dirs++
	if err := a.tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: int64(fi.Mode().Perm()),
		ModTime: fi.ModTime(), Format: tar.FormatPAX}); err != nil {
		return err
	}
	entries, err := d.ReadDir(".")
	if err != nil {
		return err
	}
	for _, e := range entries {
		child := name + "/" + e.Name()
		switch {
		case !validName(child) || !e.IsDir() && !e.Type().IsRegular():
			a.st.Skipped++
		case e.IsDir():
			sub, err := d.OpenDir(e.Name())
			if err != nil {
				return err
			}
			sfi, err := sub.Stat()
			if err == nil {
				err = a.dir(sub, child, sfi)
			}
			sub.Close()
			if err != nil {
				return err
			}
		default:
			if err := a.file(d, e.Name(), child); err != nil {
				return err
			}
		}
	}
	return nil
}

// file adds the regular file name of d as the archive's entry child.
func (a *archiver) file(d *nofollow.Dir, name, child string) error {
	f, fi, err := d.OpenFile(name)
	if err != nil {
		return err
	}
	defer f.Close()
	if hardLinks(fi) > 1 {
		a.st.Skipped++
		return nil
	}
	hdr := &tar.Header{Typeflag: tar.TypeReg, Name: child, Size: fi.Size(), Mode: int64(fi.Mode().Perm()), ModTime: fi.ModTime(), Format: tar.FormatPAX}
	if err := a.tw.WriteHeader(hdr); err != nil {
		return err
	}
	n, err := io.CopyBuffer(a.tw, io.LimitReader(ctxReader{a.ctx, f}, hdr.Size), a.buf)
	if err != nil {
		return err
	}
	if n != hdr.Size {
		return fmt.Errorf("%s shrank while being archived", filepath.Join(d.Path(), name))
	}
	a.st.Files++
	a.st.Bytes += n
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
