//go:build unix

package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
)

// setCredential runs cmd as uid (and gid uid) with no supplementary groups.
func setCredential(cmd *exec.Cmd, uid int) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid), Groups: []uint32{}}
}

// killUID kills every process that runs as uid, wherever it is (kill -KILL -1 run as uid): what a
// step left behind, escaped from its process group, or what a kiln that died left running, so
// that no process of one build still runs when the uid goes to the next.
func killUID(uid int) error {
	cmd := exec.Command("/bin/sh", "-c", "kill -KILL -1")
	cmd.Dir = "/"
	cmd.Env = []string{}
	setCredential(cmd, uid)
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) { // the shell kills itself too
		return fmt.Errorf("sandbox: stopping the processes of build uid %d: %w", uid, err)
	}
	return nil
}

// giveWritable makes uid the owner (user and group) of everything under the jail's writable
// directories but its protected paths, which stay as they are (kiln's, read-only in the sandbox).
// Symlinks are changed themselves, never followed. A file with several hard links is left alone:
// it may be linked from somewhere the build must not own.
func giveWritable(j Jail, uid int) error {
	protected := make([]string, 0, len(j.Protected))
	for _, p := range j.Protected {
		protected = append(protected, filepath.Clean(p))
	}
	for _, root := range j.Writable {
		root = filepath.Clean(root)
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil // gone meanwhile
				}
				return err
			}
			if slices.Contains(protected, path) {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			fi, err := d.Info()
			if err != nil {
				return nil
			}
			st, ok := fi.Sys().(*syscall.Stat_t)
			if !ok || (int(st.Uid) == uid && int(st.Gid) == uid) {
				return nil
			}
			if !d.IsDir() && st.Nlink > 1 {
				return nil
			}
			return os.Lchown(path, uid, uid)
		})
		if err != nil {
			return fmt.Errorf("sandbox: giving the build's directory %s to build uid %d: %w", root, uid, err)
		}
	}
	return nil
}
