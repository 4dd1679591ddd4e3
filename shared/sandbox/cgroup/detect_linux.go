package cgroup

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// BuildsDir is the directory below kiln's own group that holds the builds' groups.
const BuildsDir = "kiln-builds"

// serviceDir is where kiln moves its own process on cgroup v2 when its group must hand its
// controllers down (a v2 group with processes of its own cannot).
const serviceDir = "kiln-service"

// hierarchy is one cgroup hierarchy kiln makes groups in.
type hierarchy struct {
	v2 bool
	// own is kiln's own group's directory; base is own/kiln-builds.
	own, base string
	// limits are the controllers (Memory, Pids, CPU) whose limits it carries.
	limits []string
}

// Manager makes the groups of build steps. Its zero value applies no limit.
type Manager struct {
	hier        []hierarchy
	unavailable []string
	logger      *slog.Logger
}

// procFiles are where Open reads the host's cgroups (tests point them elsewhere).
type procFiles struct{ mountinfo, cgroup string }

// Open finds what this host allows: for each of memory, pids and cpu, a cgroup v1 hierarchy or
// the v2 one where kiln may make groups below its own. It never fails: what cannot be applied is
// in Unavailable, with why.
func Open(logger *slog.Logger) *Manager {
	return open(procFiles{"/proc/self/mountinfo", "/proc/self/cgroup"}, logger)
}

func open(pf procFiles, logger *slog.Logger) *Manager {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	m := &Manager{logger: logger}
	mounts, err := readMounts(pf.mountinfo)
	if err != nil {
		m.allUnavailable(fmt.Sprintf("cannot read the mounts: %v", err))
		return m
	}
	own, err := readOwnGroups(pf.cgroup)
	if err != nil {
		m.allUnavailable(fmt.Sprintf("cannot read kiln's own control groups: %v", err))
		return m
	}
	v2 := hierarchy{v2: true}
	var v2Missing []string
	if mnt, ok := mounts.v2(); ok {
		if path, ok := own[""]; ok {
			v2.own = mnt.dir(path)
		}
	}
	var v2Have []string
	if v2.own != "" {
		if b, err := os.ReadFile(filepath.Join(v2.own, "cgroup.controllers")); err == nil {
			v2Have = strings.Fields(string(b))
		}
	}
	byDir := map[string]*hierarchy{}
	var order []string
	for _, c := range controllers {
		if mnt, ok := mounts.v1(c); ok {
			path, ok := own[c]
			if !ok {
				m.unavailable = append(m.unavailable, fmt.Sprintf("%s: kiln's own %s group is not listed in /proc/self/cgroup", c, c))
				continue
			}
			dir := mnt.dir(path)
			h := byDir[dir]
			if h == nil {
				h = &hierarchy{own: dir, base: filepath.Join(dir, BuildsDir)}
				byDir[dir] = h
				order = append(order, dir)
			}
			h.limits = append(h.limits, c)
			continue
		}
		if slices.Contains(v2Have, c) {
			v2.limits = append(v2.limits, c)
			continue
		}
		v2Missing = append(v2Missing, c)
	}
	for _, c := range v2Missing {
		switch {
		case v2.own == "":
			m.unavailable = append(m.unavailable, fmt.Sprintf("%s: this host has no %s controller (neither a cgroup v1 %s hierarchy nor cgroup v2)", c, c, c))
		default:
			m.unavailable = append(m.unavailable, fmt.Sprintf("%s: the %s controller is not delegated to kiln's control group %s (run kiln as a systemd service with Delegate=yes)", c, c, v2.own))
		}
	}
	for _, dir := range order {
		h := byDir[dir]
		if err := os.Mkdir(h.base, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			m.cannot(h.limits, "cannot make %s: %v%s", h.base, err, notRootHint(err))
			continue
		}
		m.hier = append(m.hier, *h)
	}
	if len(v2.limits) > 0 {
		v2.base = filepath.Join(v2.own, BuildsDir)
		if err := m.prepareV2(v2); err != nil {
			m.cannot(v2.limits, "%v%s", err, notRootHint(err))
		} else {
			m.hier = append(m.hier, v2)
		}
	}
	return m
}

// prepareV2 hands the controllers down from kiln's own group to kiln-builds and on to the build
// groups. A v2 group that holds processes cannot hand controllers down (but the root), so kiln
// first moves itself into a group of its own, kiln-service, below its own.
func (m *Manager) prepareV2(h hierarchy) error {
	enable := ""
	for _, c := range h.limits {
		enable += " +" + c
	}
	enable = strings.TrimSpace(enable)
	ctl := filepath.Join(h.own, "cgroup.subtree_control")
	if err := writeFile(ctl, enable); errors.Is(err, syscall.EBUSY) {
		svc := filepath.Join(h.own, serviceDir)
		if err := os.Mkdir(svc, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("cannot make %s for kiln's own process: %w", svc, err)
		}
		if err := writeFile(filepath.Join(svc, "cgroup.procs"), strconv.Itoa(os.Getpid())); err != nil {
			return fmt.Errorf("cannot move kiln into %s: %w", svc, err)
		}
		m.logger.Info("cgroup: kiln moved its own process into a group of its own, so that its group can hand controllers to the builds' groups", slog.String("group", svc))
		if err := writeFile(ctl, enable); err != nil {
			return fmt.Errorf("cannot enable %s in %s (does another process share kiln's group?): %w", enable, ctl, err)
		}
	} else if err != nil {
		return fmt.Errorf("cannot enable %s in %s: %w", enable, ctl, err)
	}
	if err := os.Mkdir(h.base, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("cannot make %s: %w", h.base, err)
	}
	if err := writeFile(filepath.Join(h.base, "cgroup.subtree_control"), enable); err != nil {
		return fmt.Errorf("cannot enable %s in %s: %w", enable, h.base, err)
	}
	return nil
}

func (m *Manager) cannot(limits []string, format string, args ...any) {
	why := fmt.Sprintf(format, args...)
	for _, c := range limits {
		m.unavailable = append(m.unavailable, c+": "+why)
	}
}

func (m *Manager) allUnavailable(why string) {
	m.cannot(controllers, "%s", why)
}

// notRootHint explains a permission error.
func notRootHint(err error) string {
	if !errors.Is(err, fs.ErrPermission) && !errors.Is(err, syscall.EROFS) {
		return ""
	}
	if os.Geteuid() != 0 {
		return " (kiln is not root, and its control group is not delegated to its user: run it as a systemd service with Delegate=yes)"
	}
	return " (the cgroup file system is read-only here, as in a container that does not delegate cgroups)"
}

// Unavailable lists the limits this host cannot apply, each with why ("memory: ...").
func (m *Manager) Unavailable() []string { return slices.Clone(m.unavailable) }

// Available lists the limits this host applies, each with where ("memory: cgroup v1 <dir>").
func (m *Manager) Available() []string {
	var out []string
	for _, h := range m.hier {
		v := "v1"
		if h.v2 {
			v = "v2"
		}
		for _, c := range h.limits {
			out = append(out, fmt.Sprintf("%s: cgroup %s %s", c, v, h.base))
		}
	}
	slices.Sort(out)
	return out
}

// Applies says whether the host applies the limit of controller c (Memory, Pids, CPU).
func (m *Manager) Applies(c string) bool {
	for _, h := range m.hier {
		if slices.Contains(h.limits, c) {
			return true
		}
	}
	return false
}

// mount is a cgroup file system mounted at mountPoint, showing its hierarchy from root.
type mount struct {
	root, mountPoint string
	v2               bool
	controllers      []string
}

// dir is the directory of the group at path (as /proc/self/cgroup names it).
func (mt mount) dir(path string) string {
	rel, ok := strings.CutPrefix(path, mt.root)
	if !ok || mt.root == "/" {
		rel = path
	}
	return filepath.Join(mt.mountPoint, rel)
}

type mounts []mount

func (ms mounts) v1(c string) (mount, bool) {
	for _, mt := range ms {
		if !mt.v2 && slices.Contains(mt.controllers, c) {
			return mt, true
		}
	}
	return mount{}, false
}

func (ms mounts) v2() (mount, bool) {
	for _, mt := range ms {
		if mt.v2 {
			return mt, true
		}
	}
	return mount{}, false
}

// readMounts reads the cgroup mounts of a mountinfo file (proc(5)).
func readMounts(path string) (mounts, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out mounts
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		fields, tail := strings.Fields(pre), strings.Fields(post)
		if len(fields) < 5 || len(tail) < 3 {
			continue
		}
		mt := mount{root: unescape(fields[3]), mountPoint: unescape(fields[4])}
		switch tail[0] {
		case "cgroup2":
			mt.v2 = true
		case "cgroup":
			mt.controllers = strings.Split(tail[2], ",")
		default:
			continue
		}
		out = append(out, mt)
	}
	return out, sc.Err()
}

// unescape undoes mountinfo's octal escapes (\040 for a space).
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// readOwnGroups reads /proc/self/cgroup: each v1 controller's group, and under "" the v2 group.
func readOwnGroups(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			out[""] = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			out[c] = parts[2]
		}
	}
	return out, nil
}

// writeFile writes a value to a cgroup file (which exists: no creating, no truncating).
func writeFile(path, value string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(value)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %q to %s: %w", value, path, err)
	}
	return nil
}
