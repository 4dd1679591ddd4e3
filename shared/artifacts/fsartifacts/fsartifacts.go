// Package fsartifacts keeps artifacts as files in a directory on this machine: the key
// "k1/b2.tar.gz" is the file <dir>/k1/b2.tar.gz.
package fsartifacts

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/kilnbuild/kiln/shared/artifacts"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// partialPrefix starts the names of files being written. Keys cannot name them (no key segment
// starts with a dot), and New removes those a crash left behind.
const partialPrefix = ".partial-"

// Store is an artifacts.Store on a local directory. Put writes a temporary file next to the
// artifact, fsyncs it, renames it into place and fsyncs the directories, so that after a crash an
// artifact is either whole or absent.
type Store struct {
	dir string
}

var _ artifacts.Store = (*Store)(nil)

// New opens (creating it if needed) the store in dir, and removes the temporary files of Puts
// that a crash interrupted. Only one process may use dir at a time.
func New(dir string) (*Store, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("artifacts dir: %w", err)
	}
	if err := os.MkdirAll(abs, 0o750); err != nil {
		return nil, fmt.Errorf("artifacts dir: %w", err)
	}
	err = filepath.WalkDir(abs, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasPrefix(d.Name(), partialPrefix) {
			return os.Remove(path)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("artifacts dir: remove partial files: %w", err)
	}
	return &Store{dir: abs}, nil
}

func (s *Store) path(key string) (string, error) {
	if err := artifacts.ValidateKey(key); err != nil {
		return "", err
	}
	return filepath.Join(s.dir, filepath.FromSlash(key)), nil
}

// Put implements artifacts.Store.
func (s *Store) Put(ctx context.Context, key string, write func(w io.Writer) error) error {
	path, err := s.path(key)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.put(ctx, path, write); err != nil {
		return fmt.Errorf("put artifact %s: %w", key, err)
	}
	return nil
}

func (s *Store) put(ctx context.Context, path string, write func(w io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, partialPrefix+"*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err := write(artifacts.ContextWriter(ctx, f)); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Chmod(0o640); err != nil { // CreateTemp made it 0600
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return err
	}
	// Make the rename, and any directory MkdirAll created, durable.
	for d := dir; ; d = filepath.Dir(d) {
		if err := syncDir(d); err != nil {
			return err
		}
		if d == s.dir || !strings.HasPrefix(d, s.dir) {
			return nil
		}
	}
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// Open implements artifacts.Store.
func (s *Store) Open(ctx context.Context, key string) (artifacts.Object, error) {
	path, err := s.path(key)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil, kiln.NotFound("artifact")
	}
	if err != nil {
		return nil, fmt.Errorf("open artifact %s: %w", key, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("open artifact %s: %w", key, err)
	}
	if !fi.Mode().IsRegular() { // a key prefix of other keys is a directory here
		f.Close()
		return nil, kiln.NotFound("artifact")
	}
	return &object{File: f, size: fi.Size(), modTime: fi.ModTime()}, nil
}

// Delete implements artifacts.Store.
func (s *Store) Delete(ctx context.Context, key string) error {
	path, err := s.path(key)
	if err != nil {
		return err
	}
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) || err == nil && fi.IsDir() {
		return nil
	}
	if err == nil {
		err = os.Remove(path)
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("delete artifact %s: %w", key, err)
	}
	return nil
}

// object is an open artifact file.
type object struct {
	*os.File
	size    int64
	modTime time.Time
}

func (o *object) Size() int64        { return o.size }
func (o *object) ModTime() time.Time { return o.modTime }

// OSFile is the open file itself, so that a server can hand it to sendfile.
func (o *object) OSFile() *os.File { return o.File }
