package cgroup

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// closeWait bounds how long Close waits for a group's processes to die before it gives up.
const closeWait = 10 * time.Second

// Group is the control group of one build step, one directory per hierarchy.
type Group struct {
	dirs []groupDir
	fd   *os.File // the v2 directory, handed to clone3 (CgroupFD)
}

type groupDir struct {
	path   string
	v2     bool
	limits []string
}

// New makes the group name (a build's id) in every hierarchy, with the limits each carries. A
// group of that name left from an earlier run is emptied and made again.
func (m *Manager) New(name string, l Limits) (*Group, error) {
	if !groupName.MatchString(name) {
		return nil, fmt.Errorf("cgroup: %q is not a group name", name)
	}
	if err := l.Validate(); err != nil {
		return nil, err
	}
	g := &Group{}
	for _, h := range m.hier {
		// The group's name carries kiln's pid: two kiln processes of one host (kiln serve and kiln
		// agent) share kiln-builds where their own groups are one (v1's pids and cpu at /), and
		// a build name of one must never empty the other's group.
		d := groupDir{path: filepath.Join(h.base, dirName(name)), v2: h.v2, limits: h.limits}
		if _, err := os.Stat(d.path); err == nil {
			if err := d.remove(); err != nil {
				g.Close()
				return nil, fmt.Errorf("cgroup: a group left from before: %w", err)
			}
		}
		if err := os.Mkdir(d.path, 0o755); err != nil {
			g.Close()
			return nil, fmt.Errorf("cgroup: %w", err)
		}
		g.dirs = append(g.dirs, d)
		if err := d.apply(l); err != nil {
			g.Close()
			return nil, fmt.Errorf("cgroup: %w", err)
		}
	}
	return g, nil
}

// apply writes the limits this directory carries.
func (d groupDir) apply(l Limits) error {
	for _, c := range d.limits {
		var err error
		switch {
		case c == Memory && l.MemoryBytes > 0 && d.v2:
			err = d.write("memory.max", l.MemoryBytes)
			if err == nil {
				// No swapping past the limit, and an OOM kill takes the whole build, not one
				// compiler at random.
				_ = d.writeIfThere("memory.swap.max", 0)
				_ = d.writeIfThere("memory.oom.group", 1)
			}
		case c == Memory && l.MemoryBytes > 0:
			err = d.write("memory.limit_in_bytes", l.MemoryBytes)
			if err == nil {
				_ = d.writeIfThere("memory.memsw.limit_in_bytes", l.MemoryBytes)
			}
		case c == Pids && l.Pids > 0:
			err = d.write("pids.max", l.Pids)
		case c == CPU && l.CPUWeight > 0 && d.v2:
			err = d.write("cpu.weight", int64(l.CPUWeight))
		case c == CPU && l.CPUWeight > 0:
			err = d.write("cpu.shares", max(2, int64(l.CPUWeight)*1024/100))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (d groupDir) write(file string, v int64) error {
	return writeFile(filepath.Join(d.path, file), strconv.FormatInt(v, 10))
}

func (d groupDir) writeIfThere(file string, v int64) error {
	if _, err := os.Stat(filepath.Join(d.path, file)); err != nil {
		return nil
	}
	return d.write(file, v)
}

// Place makes cmd start inside the group, before it runs anything, so that no child it forks
// escapes. Call it once, before cmd.Start. On cgroup v2 the kernel starts the process in the
// group (clone3 with CgroupFD). On v1, cmd is wrapped in /bin/sh, which writes its own pid into
// the group's cgroup.procs and then execs the command; when cmd runs as another user
// (SysProcAttr.Credential), the group's cgroup.procs and tasks are given to that user so that
// the process may move itself in.
func (g *Group) Place(cmd *exec.Cmd) error {
	var procs []string
	for _, d := range g.dirs {
		if d.v2 {
			f, err := os.Open(d.path)
			if err != nil {
				return fmt.Errorf("cgroup: %w", err)
			}
			g.fd = f
			if cmd.SysProcAttr == nil {
				cmd.SysProcAttr = &syscall.SysProcAttr{}
			}
			cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, int(f.Fd())
			continue
		}
		if cred := credential(cmd); cred != nil {
			for _, file := range []string{"cgroup.procs", "tasks"} {
				if err := os.Chown(filepath.Join(d.path, file), int(cred.Uid), int(cred.Gid)); err != nil {
					return fmt.Errorf("cgroup: give the group to uid %d: %w", cred.Uid, err)
				}
			}
		}
		procs = append(procs, filepath.Join(d.path, "cgroup.procs"))
	}
	if len(procs) == 0 {
		return nil
	}
	if cmd.Path == "" || cmd.Process != nil {
		return errors.New("cgroup: place a command before it starts")
	}
	var script strings.Builder
	for _, p := range procs {
		fmt.Fprintf(&script, "echo $$ > %s || { echo 'kiln: cannot enter the control group %s' >&2; exit 125; }\n", shellQuote(p), strings.ReplaceAll(p, "'", ""))
	}
	script.WriteString(`exec "$@"`)
	args := append([]string{"/bin/sh", "-c", script.String(), "kiln-cgroup", cmd.Path}, cmd.Args[1:]...)
	cmd.Path, cmd.Args = "/bin/sh", args
	return nil
}

// credential is the non-root user cmd runs as, if any.
func credential(cmd *exec.Cmd) *syscall.Credential {
	if cmd.SysProcAttr == nil || cmd.SysProcAttr.Credential == nil || cmd.SysProcAttr.Credential.Uid == 0 {
		return nil
	}
	return cmd.SysProcAttr.Credential
}

// shellQuote quotes s for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// MemoryExceeded says whether the kernel killed a process of the group for going over its
// memory limit (v2 memory.events oom_kill; v1 memory.oom_control oom_kill, or memory.failcnt on
// kernels that do not count kills).
func (g *Group) MemoryExceeded() bool {
	for _, d := range g.dirs {
		if !hasLimit(d, Memory) {
			continue
		}
		if d.v2 {
			return d.counter("memory.events", "oom_kill") > 0 || d.counter("memory.events", "oom_group_kill") > 0
		}
		if n := d.counter("memory.oom_control", "oom_kill"); n >= 0 {
			return n > 0
		}
		b, err := os.ReadFile(filepath.Join(d.path, "memory.failcnt"))
		n, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		return err == nil && n > 0
	}
	return false
}

// PidsExceeded says whether the group refused a fork for being at its process limit.
func (g *Group) PidsExceeded() bool {
	for _, d := range g.dirs {
		if hasLimit(d, Pids) {
			return d.counter("pids.events", "max") > 0
		}
	}
	return false
}

func hasLimit(d groupDir, c string) bool {
	for _, x := range d.limits {
		if x == c {
			return true
		}
	}
	return false
}

// counter reads a "name value" line of a flat-keyed file; -1 when it is not there.
func (d groupDir) counter(file, name string) int64 {
	b, err := os.ReadFile(filepath.Join(d.path, file))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, " "); ok && k == name {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err == nil {
				return n
			}
		}
	}
	return -1
}

// Close kills what is left in the group and removes it.
func (g *Group) Close() error {
	var errs []error
	for _, d := range g.dirs {
		if err := d.remove(); err != nil {
			errs = append(errs, err)
		}
	}
	g.dirs = nil
	if g.fd != nil {
		g.fd.Close()
		g.fd = nil
	}
	return errors.Join(errs...)
}

// remove kills the directory's processes until none is left, then removes it.
func (d groupDir) remove() error {
	if d.v2 {
		_ = d.writeIfThere("cgroup.kill", 1)
	}
	deadline := time.Now().Add(closeWait)
	for {
		for _, pid := range d.pids() {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		err := syscall.Rmdir(d.path)
		if err == nil || errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if !errors.Is(err, syscall.EBUSY) || time.Now().After(deadline) {
			return fmt.Errorf("cgroup: remove %s: %w", d.path, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// pids are the processes in the directory.
func (d groupDir) pids() []int {
	b, err := os.ReadFile(filepath.Join(d.path, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if n, err := strconv.Atoi(f); err == nil && n > 0 {
			out = append(out, n)
		}
	}
	return out
}

// Dirs are the group's directories, one per hierarchy.
func (g *Group) Dirs() []string {
	var out []string
	for _, d := range g.dirs {
		out = append(out, d.path)
	}
	return out
}

// dirName is the directory of a group named name: kiln's pid, then the name.
func dirName(name string) string { return strconv.Itoa(os.Getpid()) + "-" + name }
