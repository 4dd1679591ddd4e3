// Package nofollow opens files and directories beneath a directory without ever following a
// symbolic link: every component of a path must be a real directory (and the last one what the
// caller asked for), names are clean, relative and local (no "..", nothing absolute), and each
// directory is checked, once open, to be the one that was looked at, so a component swapped for
// a link between the look and the open is refused too.
//
// kiln uses it wherever it works, with its own privileges (root on a shared host), on a tree a
// build could have changed: the build cache's save, restore and clean of a workspace. A build
// owns its workspace and can leave any name in it a link to another organization's workspace,
// to the engine or to kiln's own data; through a Dir such a name is an error wrapping
// ErrSymlink, never a way out.
package nofollow

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

var (
	// ErrSymlink is wrapped by the error for a path one of whose components is a symbolic link
	// (or, on Windows, a junction or another reparse point).
	ErrSymlink = errors.New("is a symbolic link, which kiln does not follow")
	// ErrNotDir is wrapped by the error for a path component that is not a directory.
	ErrNotDir = errors.New("is not a directory")
	// ErrNotRegular is wrapped by OpenFile's error for something other than a regular file.
	ErrNotRegular = errors.New("is not a regular file")
	// ErrChanged is wrapped by the error for a file or directory that was replaced between the
	// look at it and its opening.
	ErrChanged = errors.New("was replaced while kiln opened it")
	// ErrName is wrapped by the error for a name that is not clean, relative and local.
	ErrName = errors.New("is not a clean relative path")
)

// Dir is an open directory; every method resolves names beneath it without following links.
// It is safe for concurrent use.
type Dir struct {
	root *os.Root
	path string // for messages
}

// Open opens the directory at path, which must not itself be a symbolic link. What lies above
// path is trusted: callers open directories they made themselves (a workspace of kiln's data).
func Open(dir string) (*Dir, error) {
	fi, err := os.Lstat(dir)
	if err != nil {
		return nil, err
	}
	if err := wantDir(dir, fi); err != nil {
		return nil, err
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return verified(r, fi, dir)
}

// Close releases the directory.
func (d *Dir) Close() error { return d.root.Close() }

// Path is the directory's path, as opened (for messages).
func (d *Dir) Path() string { return d.path }

// Stat describes the directory itself.
func (d *Dir) Stat() (fs.FileInfo, error) { return d.root.Stat(".") }

// OpenDir opens the directory rel beneath d ("." for d itself, as a new Dir).
func (d *Dir) OpenDir(rel string) (*Dir, error) {
	names, err := split(d.path, rel)
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		r, err := d.root.OpenRoot(".")
		if err != nil {
			return nil, err
		}
		return &Dir{root: r, path: d.path}, nil
	}
	cur := d
	for i, name := range names {
		next, err := cur.child(name)
		if i > 0 {
			cur.Close()
		}
		if err != nil {
			return nil, err
		}
		cur = next
	}
	return cur, nil
}

// child opens the directory name (one component) of d.
func (d *Dir) child(name string) (*Dir, error) {
	p := filepath.Join(d.path, name)
	fi, err := d.root.Lstat(name)
	if err != nil {
		return nil, err
	}
	if err := wantDir(p, fi); err != nil {
		return nil, err
	}
	r, err := d.root.OpenRoot(name)
	if err != nil {
		return nil, err
	}
	return verified(r, fi, p)
}

// verified returns r as a Dir if it is the directory fi describes, else closes it.
func verified(r *os.Root, fi fs.FileInfo, p string) (*Dir, error) {
	got, err := r.Stat(".")
	if err == nil && !os.SameFile(fi, got) {
		err = &fs.PathError{Op: "open", Path: p, Err: ErrChanged}
	}
	if err != nil {
		r.Close()
		return nil, err
	}
	return &Dir{root: r, path: p}, nil
}

func wantDir(p string, fi fs.FileInfo) error {
	switch {
	case isLink(fi):
		return &fs.PathError{Op: "open", Path: p, Err: ErrSymlink}
	case !fi.IsDir():
		return &fs.PathError{Op: "open", Path: p, Err: ErrNotDir}
	}
	return nil
}

// isLink tells a symbolic link, or on Windows any reparse point (a junction is one too).
func isLink(fi fs.FileInfo) bool {
	return fi.Mode()&(fs.ModeSymlink|fs.ModeIrregular) != 0
}

// split checks rel (slash-separated, clean, relative, local) and returns its components.
func split(base, rel string) ([]string, error) {
	if rel == "." || rel == "" {
		return nil, nil
	}
	if path.Clean(rel) != rel || strings.ContainsAny(rel, "\\\x00") || !filepath.IsLocal(filepath.FromSlash(rel)) {
		return nil, &fs.PathError{Op: "open", Path: filepath.Join(base, rel), Err: ErrName}
	}
	return strings.Split(rel, "/"), nil
}

// parent opens the directory that holds rel and returns it with rel's last component, and what
// releases it (nothing when it is d itself, so that a name of one component costs no open).
func (d *Dir) parent(rel string) (*Dir, string, func(), error) {
	names, err := split(d.path, rel)
	if err != nil {
		return nil, "", nil, err
	}
	if len(names) == 0 {
		return nil, "", nil, &fs.PathError{Op: "open", Path: d.path, Err: fmt.Errorf("%w: names the directory itself", ErrName)}
	}
	if len(names) == 1 {
		return d, names[0], func() {}, nil
	}
	dir, err := d.OpenDir(strings.Join(names[:len(names)-1], "/"))
	if err != nil {
		return nil, "", nil, err
	}
	return dir, names[len(names)-1], func() { dir.Close() }, nil
}

// Lstat describes rel without following it (its directories must not be links either).
func (d *Dir) Lstat(rel string) (fs.FileInfo, error) {
	dir, name, release, err := d.parent(rel)
	if err != nil {
		return nil, err
	}
	defer release()
	return dir.root.Lstat(name)
}

// ReadDir lists the directory rel, sorted by name. Entries are what they are: a link is listed
// as a link and never followed.
func (d *Dir) ReadDir(rel string) ([]fs.DirEntry, error) {
	dir := d
	if rel != "." {
		var err error
		if dir, err = d.OpenDir(rel); err != nil {
			return nil, err
		}
		defer dir.Close()
	}
	f, err := dir.root.Open(".")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, err
}

// OpenFile opens the regular file rel for reading, with what it is. A link, a pipe (opened
// without blocking, so a swapped-in FIFO cannot hang kiln), a device or a socket is refused.
func (d *Dir) OpenFile(rel string) (*os.File, fs.FileInfo, error) {
	dir, name, release, err := d.parent(rel)
	if err != nil {
		return nil, nil, err
	}
	defer release()
	p := filepath.Join(dir.path, name)
	fi, err := dir.root.Lstat(name)
	if err != nil {
		return nil, nil, err
	}
	if isLink(fi) {
		return nil, nil, &fs.PathError{Op: "open", Path: p, Err: ErrSymlink}
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, &fs.PathError{Op: "open", Path: p, Err: ErrNotRegular}
	}
	f, err := dir.root.OpenFile(name, os.O_RDONLY|openNoBlock, 0)
	if err != nil {
		return nil, nil, err
	}
	got, err := f.Stat()
	if err == nil && (!os.SameFile(fi, got) || !got.Mode().IsRegular()) {
		err = &fs.PathError{Op: "open", Path: p, Err: ErrChanged}
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, got, nil
}

// Create makes the new file rel for writing; it fails if anything, a link included, has that
// name already.
func (d *Dir) Create(rel string, perm fs.FileMode) (*os.File, error) {
	dir, name, release, err := d.parent(rel)
	if err != nil {
		return nil, err
	}
	defer release()
	return dir.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
}

// MkdirAll makes the directory rel and any missing directory above it; an existing component
// must be a real directory.
func (d *Dir) MkdirAll(rel string, perm fs.FileMode) error {
	names, err := split(d.path, rel)
	if err != nil {
		return err
	}
	cur := d
	defer func() {
		if cur != d {
			cur.Close()
		}
	}()
	for _, name := range names {
		if err := cur.root.Mkdir(name, perm); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		next, err := cur.child(name)
		if err != nil {
			return err
		}
		if cur != d {
			cur.Close()
		}
		cur = next
	}
	return nil
}

// RemoveAll removes rel and everything beneath it, never following a link (a link is removed,
// not what it points at). A missing rel, or a missing directory above it, is no error.
func (d *Dir) RemoveAll(rel string) error {
	dir, name, release, err := d.parent(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer release()
	return dir.root.RemoveAll(name)
}

// Chmod sets the permission bits of rel, which must not be a link.
func (d *Dir) Chmod(rel string, mode fs.FileMode) error {
	return d.onNonLink(rel, func(r *os.Root, name string) error { return r.Chmod(name, mode) })
}

// Chtimes sets the access and modification times of rel, which must not be a link.
func (d *Dir) Chtimes(rel string, atime, mtime time.Time) error {
	return d.onNonLink(rel, func(r *os.Root, name string) error { return r.Chtimes(name, atime, mtime) })
}

// onNonLink runs op on rel's last component in its opened parent, once it is seen not to be a
// link. (What remains, a swap between the look and op, needs a process of the build still
// running: kiln calls it only once every process of the build has ended, and op then stays
// inside the parent directory.)
func (d *Dir) onNonLink(rel string, op func(r *os.Root, name string) error) error {
	dir, name, release, err := d.parent(rel)
	if err != nil {
		return err
	}
	defer release()
	fi, err := dir.root.Lstat(name)
	if err != nil {
		return err
	}
	if isLink(fi) {
		return &fs.PathError{Op: "chmod", Path: filepath.Join(dir.path, name), Err: ErrSymlink}
	}
	return op(dir.root, name)
}
