//go:build unix

package onemachine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// serveLockFile is the file under KILN_DATA that the running `kiln serve` holds an exclusive
// lock on, and in which it writes its process id.
const serveLockFile = "serve.lock"

// DataLock is a held lock on a data directory: one `kiln serve` or `kiln aws-local` per
// directory, so that two services never take the same builds or share a workspace. `kiln admin`
// does not take it.
type DataLock struct{ f *os.File }

// LockDataDir takes the lock or fails at once, naming the directory and the holder's pid. The
// kernel releases it when the process ends, however it ends.
func LockDataDir(dataDir string) (*DataLock, error) {
	path := filepath.Join(dataDir, serveLockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock data directory: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			holder := "another process"
			if b, rerr := os.ReadFile(path); rerr == nil {
				if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); perr == nil {
					holder = "pid " + strconv.Itoa(pid)
				}
			}
			abs, _ := filepath.Abs(dataDir)
			return nil, fmt.Errorf("data directory %s is in use by another kiln serve (%s); stop it or give this one its own KILN_DATA", abs, holder)
		}
		return nil, fmt.Errorf("lock data directory %s: %w", dataDir, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &DataLock{f: f}, nil
}

// Release lets another service use the directory. It may be called more than once.
func (l *DataLock) Release() {
	if l == nil || l.f == nil {
		return
	}
	_ = syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	l.f.Close()
	l.f = nil
}
