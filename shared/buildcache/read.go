package buildcache

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/kilnbuild/kiln/shared/nofollow"
)

// ErrUnsafeEntry is wrapped by Read's error for an archive entry it refuses: outside the listed
// directories, not a regular file or directory, or named twice.
var ErrUnsafeEntry = errors.New("unsafe build cache entry")

// Read restores the cache archive r (as Write makes it) into the directories dirs of the project
// directory root, through which nothing is followed: a link at or above a name it writes fails
// the restore, so nothing lands outside the project directory's own directories. First it removes those directories (a restore replaces, never merges); then it
// extracts files and directories with their modes (permission bits only) and modification times.
// It refuses absolute names, "..", entries outside dirs, links, devices and any other special
// entry, and a corrupt or truncated archive (zstd checksums every frame). On any error the
// directories dirs are removed again, so that the caller can build cold.
//
// Memory is bounded by the decoder (a window of at most 64 MiB) whatever the archive's size.
func Read(ctx context.Context, r io.Reader, root *nofollow.Dir, dirs []string) (st Stats, err error) {
	if err := checkDirs(dirs); err != nil {
		return st, err
	}
	rt := root
	if err := RemoveDirs(rt, dirs); err != nil {
		return st, err
	}
	defer func() {
		if err != nil {
			if rerr := RemoveDirs(rt, dirs); rerr != nil {
				err = errors.Join(err, rerr)
			}
		}
	}()
	counted := &countingReader{r: ctxReader{ctx, r}}
	dec, err := zstd.NewReader(counted,
		zstd.WithDecoderMaxWindow(decoderMaxWindow),
		zstd.WithDecoderConcurrency(decoderConcurrency),
		zstd.WithDecoderLowmem(true),
	)
	if err != nil {
		return st, fmt.Errorf("build cache: zstd decoder: %w", err)
	}
	defer dec.Close()
	x := extractor{rt: rt, dirs: dirs, buf: make([]byte, copyBufferSize), seen: map[string]bool{}}
	defer x.closeParent()
	if err := x.extract(tar.NewReader(dec), &st); err != nil {
		return st, fmt.Errorf("build cache: restore: %w", err)
	}
	// The tar end marker may come before the end of the zstd frame, whose checksum is read last.
	if _, err := io.Copy(io.Discard, dec); err != nil {
		return st, fmt.Errorf("build cache: restore: %w", err)
	}
	if counted.n == 0 { // the decoder takes no input as an empty stream
		return st, fmt.Errorf("build cache: restore: the archive is empty")
	}
	if err := x.finishDirs(); err != nil {
		return st, fmt.Errorf("build cache: restore: %w", err)
	}
	return st, nil
}

// RemoveDirs removes the directories dirs of the project directory rt (a cold build starts
// without them). Nothing is followed: a listed directory that is a link loses the link only.
func RemoveDirs(rt *nofollow.Dir, dirs []string) error {
	for _, d := range dirs {
		if err := rt.RemoveAll(d); err != nil {
			return fmt.Errorf("build cache: remove %s: %w", d, err)
		}
	}
	return nil
}

type extractor struct {
	rt      *nofollow.Dir
	dirs    []string
	buf     []byte
	seen    map[string]bool // names of directories extracted, to refuse a second entry
	dirMeta []dirMeta       // applied once the directories' contents are in place
	// parent is the directory the last file went into (files come directory by directory), so
	// that each file does not open its directories again.
	parent     *nofollow.Dir
	parentName string
}

type dirMeta struct {
	name    string
	mode    fs.FileMode
	modTime time.Time
}

func (x *extractor) extract(tr *tar.Reader, st *Stats) error {
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		name := path.Clean(hdr.Name) // directories end with "/"
		if hdr.Name != name && hdr.Name != name+"/" || !validName(name) {
			return fmt.Errorf("%w %q: not a clean relative path", ErrUnsafeEntry, hdr.Name)
		}
		if _, ok := dirOf(name, x.dirs); !ok {
			return fmt.Errorf("%w %q: outside %v", ErrUnsafeEntry, hdr.Name, x.dirs)
		}
		mode := fs.FileMode(hdr.Mode).Perm()
		switch hdr.Typeflag {
		case tar.TypeDir:
			if x.seen[name] {
				return fmt.Errorf("%w %q: directory named twice", ErrUnsafeEntry, hdr.Name)
			}
			x.seen[name] = true
			if err := x.rt.MkdirAll(name, 0o755); err != nil {
				return err
			}
			x.dirMeta = append(x.dirMeta, dirMeta{name, mode, hdr.ModTime})
			st.Dirs++
		case tar.TypeReg:
			if err := x.file(tr, name, mode, hdr.ModTime); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			st.Files++
			st.Bytes += hdr.Size
		default:
			return fmt.Errorf("%w %q: type %q is not a regular file or directory", ErrUnsafeEntry, hdr.Name, hdr.Typeflag)
		}
	}
}

// file writes one regular file; O_EXCL refuses a second entry of the same name.
func (x *extractor) file(r io.Reader, name string, mode fs.FileMode, modTime time.Time) error {
	dir, err := x.dirFor(path.Dir(name))
	if err != nil {
		return err
	}
	base := path.Base(name)
	f, err := dir.Create(base, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%w: named twice", ErrUnsafeEntry)
	}
	if err != nil {
		return err
	}
	_, err = io.CopyBuffer(f, r, x.buf)
	if err == nil {
		err = f.Chmod(mode)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = dir.Chtimes(base, modTime, modTime)
	}
	return err
}

// dirFor makes the directory name (a listed directory or one beneath it) and opens it, keeping
// it open for the next file.
func (x *extractor) dirFor(name string) (*nofollow.Dir, error) {
	if x.parent != nil && x.parentName == name {
		return x.parent, nil
	}
	x.closeParent()
	if err := x.rt.MkdirAll(name, 0o755); err != nil {
		return nil, err
	}
	d, err := x.rt.OpenDir(name)
	if err != nil {
		return nil, err
	}
	x.parent, x.parentName = d, name
	return d, nil
}

func (x *extractor) closeParent() {
	if x.parent != nil {
		x.parent.Close()
		x.parent = nil
	}
}

// finishDirs sets the directories' modes and times, deepest first, after their contents (which
// would change their times, and which a read-only mode would have refused).
func (x *extractor) finishDirs() error {
	for _, d := range slices.Backward(x.dirMeta) {
		if err := x.rt.Chmod(d.name, d.mode); err != nil {
			return err
		}
		if err := x.rt.Chtimes(d.name, d.modTime, d.modTime); err != nil {
			return err
		}
	}
	return nil
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
