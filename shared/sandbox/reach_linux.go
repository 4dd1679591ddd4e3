package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// cover is a host directory a build uid cannot search (KILN_DATA is 0700, root's), and the
// paths under it the step must reach: in the step's mount namespace the directory is covered
// with an empty tmpfs that holds only those paths, bound back at their own places.
type cover struct {
	dir  string
	keep []string
}

// startReachable calls start so that the process it starts can reach each of paths at its own
// path as uid. When some path lies under a directory uid cannot search, start runs on an OS
// thread of its own whose private mount namespace covers that directory with an empty tmpfs
// (mode 0755) holding only the paths, bound back; the rest of the directory (kiln's keys, its
// database, other builds' workspaces) stays out of sight. The thread ends after start: its
// mount namespace is never seen by the rest of kiln.
func startReachable(uid int, paths []string, start func() error) error {
	covers := reachPlan(uid, paths)
	if len(covers) == 0 {
		return start()
	}
	errc := make(chan error, 1)
	go func() {
		// Never unlocked: the Go runtime ends a thread whose goroutine exits while locked to it,
		// so no other goroutine ever runs in this mount namespace.
		runtime.LockOSThread()
		errc <- func() error {
			if err := syscall.Unshare(syscall.CLONE_NEWNS | syscall.CLONE_FS); err != nil {
				return fmt.Errorf("sandbox: a mount namespace for the build: %w", err)
			}
			if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_SLAVE, ""); err != nil {
				return fmt.Errorf("sandbox: a mount namespace for the build: %w", err)
			}
			for _, c := range covers {
				if err := c.mount(); err != nil {
					return err
				}
			}
			return start()
		}()
	}()
	return <-errc
}

// reachPlan returns the directories to cover so that uid reaches every existing path.
func reachPlan(uid int, paths []string) []cover {
	var covers []cover
	for _, p := range paths {
		p = filepath.Clean(p)
		if _, err := os.Stat(p); err != nil || !filepath.IsAbs(p) {
			continue // bwrap or the step itself reports it
		}
		dir := firstClosed(uid, p)
		if dir == "" {
			continue
		}
		i := slices.IndexFunc(covers, func(c cover) bool { return c.dir == dir })
		if i < 0 {
			covers = append(covers, cover{dir: dir})
			i = len(covers) - 1
		}
		covers[i].keep = append(covers[i].keep, p)
	}
	for i := range covers {
		covers[i].keep = outermost(covers[i].keep)
	}
	return covers
}

// firstClosed returns the first ancestor of p, from the root down, that uid cannot search, or "".
func firstClosed(uid int, p string) string {
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	dir := "/"
	for _, part := range parts[:len(parts)-1] {
		if !searchable(uid, dir) {
			return dir
		}
		dir = filepath.Join(dir, part)
	}
	if !searchable(uid, dir) {
		return dir
	}
	return ""
}

// searchable says whether uid (with gid uid and no other group) may search dir, from its mode.
func searchable(uid int, dir string) bool {
	fi, err := os.Stat(dir)
	if err != nil {
		return true // nothing to cover: the step fails on it by itself
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return true
	}
	mode := fi.Mode().Perm()
	switch {
	case int(st.Uid) == uid:
		return mode&0o100 != 0
	case int(st.Gid) == uid:
		return mode&0o010 != 0
	}
	return mode&0o001 != 0
}

// outermost drops the paths that lie inside another of paths.
func outermost(paths []string) []string {
	slices.Sort(paths)
	paths = slices.Compact(paths)
	var out []string
	for _, p := range paths {
		if !slices.ContainsFunc(out, func(o string) bool { return strings.HasPrefix(p, o+"/") }) {
			out = append(out, p)
		}
	}
	return out
}

// mount covers c.dir with a tmpfs holding c.keep at their own paths. The kept paths are opened
// before the tmpfs hides them and bound back from their descriptors.
func (c cover) mount() error {
	type held struct {
		path string
		fd   int
		dir  bool
	}
	var hs []held
	defer func() {
		for _, h := range hs {
			syscall.Close(h.fd)
		}
	}()
	for _, p := range c.keep {
		fd, err := syscall.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("sandbox: opening %s for the build: %w", p, err)
		}
		var st syscall.Stat_t
		if err := syscall.Fstat(fd, &st); err != nil {
			syscall.Close(fd)
			return fmt.Errorf("sandbox: %s: %w", p, err)
		}
		hs = append(hs, held{path: p, fd: fd, dir: st.Mode&syscall.S_IFMT == syscall.S_IFDIR})
	}
	if err := syscall.Mount("kiln-build", c.dir, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, "mode=0755,size=1m"); err != nil {
		return fmt.Errorf("sandbox: covering %s for the build: %w", c.dir, err)
	}
	for _, h := range hs {
		if h.dir {
			if err := os.MkdirAll(h.path, 0o755); err != nil {
				return fmt.Errorf("sandbox: %w", err)
			}
		} else {
			if err := os.MkdirAll(filepath.Dir(h.path), 0o755); err != nil {
				return fmt.Errorf("sandbox: %w", err)
			}
			if err := os.WriteFile(h.path, nil, 0o644); err != nil {
				return fmt.Errorf("sandbox: %w", err)
			}
		}
		src := fmt.Sprintf("/proc/self/fd/%d", h.fd)
		if err := syscall.Mount(src, h.path, "", syscall.MS_BIND|syscall.MS_REC, ""); err != nil {
			return fmt.Errorf("sandbox: binding %s back for the build: %w", h.path, err)
		}
	}
	return nil
}
