// Package packaging turns a build's staged output into the .tar.gz artifact that customers
// download.
package packaging

import (
	"archive/tar"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kilnbuild/kiln/shared/manifest"
)

// Result describes a written artifact.
type Result struct {
	Size  int64  // bytes written to w
	MD5   string // hex MD5 of the bytes written to w
	Files int    // regular files and symlinks archived (directories are not counted)
}

// copyBuf is how much of a file is read at a time; ctx is checked every ctxEvery bytes.
const (
	copyBuf  = 1 << 20
	ctxEvery = 4 << 20
)

// TarGz writes srcDir to w as a gzip-compressed tar whose single top-level directory is topName:
// entries are topName/, topName/a, topName/a/b, ... in sorted walk order, directories included,
// symlinks kept as symlinks, permission bits and mtimes (whole seconds) kept, owned by uid/gid 0
// without user or group names. The size and MD5 of the output are computed as it is written.
//
// The output is one standard gzip member that gzip, tar -xzf and every gzip library read.
// Compressible data is deflated on all CPUs; data that does not compress (.pak files and other
// compressed formats, decided per 1 MiB chunk from a sample) is stored, which costs little more
// than reading, hashing and writing it. Files are streamed, never held in memory: the peak is a
// few tens of MB whatever the build's size.
//
// On error, including ctx being done, w holds an incomplete stream; when ctx is done the error
// is ctx.Err().
func TarGz(ctx context.Context, srcDir, topName string, w io.Writer) (Result, error) {
	res, err := tarGz(ctx, srcDir, topName, w, nil)
	return res, wrapErr(ctx, srcDir, err)
}

// TarGzManifest is TarGz that also returns the manifest of the archive, in the same pass: each
// regular file's path below topName and size, sorted by path (symlinks and directories are not
// listed). The list is the only thing it keeps per file: a 5,000-file build's is a few hundred KB.
func TarGzManifest(ctx context.Context, srcDir, topName string, w io.Writer) (Result, []manifest.Entry, error) {
	files := []manifest.Entry{}
	res, err := tarGz(ctx, srcDir, topName, w, &files)
	if err != nil {
		return Result{}, nil, wrapErr(ctx, srcDir, err)
	}
	manifest.Sort(files) // the walk is sorted per directory: "a/b" comes before "a.txt"
	return res, files, nil
}

func wrapErr(ctx context.Context, srcDir string, err error) error {
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("package %s: %w", srcDir, err)
	}
	return nil
}

func tarGz(ctx context.Context, srcDir, topName string, w io.Writer, files *[]manifest.Entry) (Result, error) {
	if topName == "" || topName == "." || topName == ".." || strings.ContainsAny(topName, `/\`) {
		return Result{}, fmt.Errorf("invalid top-level directory name %q", topName)
	}
	root, err := filepath.EvalSymlinks(srcDir)
	if err != nil {
		return Result{}, err
	}
	if fi, err := os.Stat(root); err != nil {
		return Result{}, err
	} else if !fi.IsDir() {
		return Result{}, fmt.Errorf("%s is not a directory", srcDir)
	}

	z := newGzipStream(ctx, w, level)
	p := &packer{ctx: ctx, z: z, tw: tar.NewWriter(z), buf: make([]byte, copyBuf), manifest: files}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		name := topName
		if rel != "." {
			name += "/" + filepath.ToSlash(rel)
		}
		return p.add(path, name, filepath.ToSlash(rel), d)
	})
	if err == nil {
		err = p.tw.Close() // the two zero blocks that end a tar
	}
	if err != nil {
		z.abort(err)
		return Result{}, err
	}
	if err := z.Close(); err != nil {
		return Result{}, err
	}
	size, sum := z.written()
	return Result{Size: size, MD5: hex.EncodeToString(sum), Files: p.files}, nil
}

// packer adds walked entries to the tar stream.
type packer struct {
	ctx   context.Context
	z     *gzipStream
	tw    *tar.Writer
	buf   []byte
	files int
	// manifest, when not nil, gets each regular file archived (path relative to the top).
	manifest *[]manifest.Entry
}

func (p *packer) add(path, name, rel string, d fs.DirEntry) error {
	if err := p.ctx.Err(); err != nil {
		return err
	}
	fi, err := d.Info()
	if err != nil {
		return err
	}
	hdr := &tar.Header{
		Name:    name,
		Mode:    tarMode(fi.Mode()),
		ModTime: fi.ModTime().Truncate(time.Second),
		Format:  tar.FormatUnknown, // USTAR when it fits, else PAX, as archive/tar chooses
	}
	switch m := fi.Mode(); {
	case m.IsDir():
		hdr.Typeflag, hdr.Name = tar.TypeDir, name+"/"
	case m&fs.ModeSymlink != 0:
		target, err := os.Readlink(path)
		if err != nil {
			return err
		}
		hdr.Typeflag, hdr.Linkname = tar.TypeSymlink, filepath.ToSlash(target) // Windows reads back \
	case m.IsRegular():
		hdr.Typeflag, hdr.Size = tar.TypeReg, fi.Size()
	default:
		return fmt.Errorf("%s: unsupported file type %s", path, m.Type())
	}
	if err := p.z.setHint(hintDeflate); err != nil {
		return err
	}
	if err := p.tw.WriteHeader(hdr); err != nil {
		return err
	}
	if hdr.Typeflag != tar.TypeDir {
		p.files++
	}
	if p.manifest != nil && hdr.Typeflag == tar.TypeReg {
		*p.manifest = append(*p.manifest, manifest.Entry{Path: rel, Size: hdr.Size})
	}
	if hdr.Typeflag != tar.TypeReg || hdr.Size == 0 {
		return nil
	}
	if err := p.z.setHint(hintFor(name, hdr.Size)); err != nil {
		return err
	}
	return p.copyFile(path, hdr.Size)
}

// copyFile streams size bytes of the file at path into the tar entry.
func (p *packer) copyFile(path string, size int64) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var sinceCheck int64
	for left := size; left > 0; {
		n, err := f.Read(p.buf[:min(int64(len(p.buf)), left)])
		if n > 0 {
			if _, err := p.tw.Write(p.buf[:n]); err != nil {
				return err
			}
			left -= int64(n)
			if sinceCheck += int64(n); sinceCheck >= ctxEvery {
				sinceCheck = 0
				if err := p.ctx.Err(); err != nil {
					return err
				}
			}
		}
		if errors.Is(err, io.EOF) && left > 0 {
			return fmt.Errorf("%s: file shrank while being packaged", path)
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
	}
	return nil
}

// tarMode is the tar mode of a file: permission bits plus setuid, setgid and sticky.
func tarMode(m fs.FileMode) int64 {
	mode := int64(m.Perm())
	if m&fs.ModeSetuid != 0 {
		mode |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		mode |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		mode |= 0o1000
	}
	return mode
}
