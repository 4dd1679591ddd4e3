package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Bubblewrap confines steps with bwrap: each step runs as user "build" (uid 1000) in user, mount,
// PID, IPC, UTS, cgroup and (by default) network namespaces of its own, on an empty root that
// holds only the system's programs and libraries (/usr, read-only), a few files of /etc, a fresh
// /proc (only the step's own processes; its kernel knobs read-only), a minimal /dev, a small
// /tmp, the jail's read-only directories and its writable ones. The environment is built from
// nothing: no variable of kiln's reaches the step, not even through /proc/1/environ (bwrap itself
// starts with the same small environment).
//
// When kiln runs as root, bwrap itself runs as a build uid of UIDs of the step's own, so the
// user namespace maps "build" to that unprivileged host uid and nothing inside maps to host root.
// Otherwise it maps "build" to kiln's own uid.
type Bubblewrap struct {
	// Path is the bwrap binary.
	Path string
	// Network is the network steps get; the zero value is NetworkNone.
	Network Network
	// UIDs are the host uids steps run as when kiln runs as root; the zero value is DefaultUIDs.
	UIDs UIDRange
	// ReadOnly are more host directories that steps see read-only at their own paths, for
	// toolchains outside the engine (an Android SDK, a JDK).
	ReadOnly []string
	// PassEnv names variables of kiln's environment handed to steps as they are (ANDROID_HOME,
	// JAVA_HOME, ...). Nothing else of kiln's environment is.
	PassEnv []string
}

// Build user inside the sandbox.
const (
	buildUID  = 1000
	buildUser = "build"
	// tmpSize caps the in-memory /tmp and /dev/shm; $TMPDIR (on disk) is where big files go.
	tmpSize = 512 << 20
)

// systemLinks are the top-level directories of the system's programs and libraries: bound
// read-only, or recreated as symlinks where the host has them as symlinks into /usr.
var systemLinks = []string{"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}

// etcFiles are the parts of /etc that programs need (name resolution, TLS roots, time zone,
// the dynamic linker, Debian's alternatives). The rest of /etc, which may hold the operator's
// secrets, stays out.
var etcFiles = []string{
	"/etc/alternatives", "/etc/ca-certificates", "/etc/ssl", "/etc/pki", "/etc/resolv.conf",
	"/etc/hosts", "/etc/host.conf", "/etc/nsswitch.conf", "/etc/gai.conf", "/etc/services",
	"/etc/protocols", "/etc/localtime", "/etc/timezone", "/etc/ld.so.cache", "/etc/ld.so.conf",
	"/etc/ld.so.conf.d", "/etc/os-release", "/etc/debian_version", "/etc/mime.types",
}

// procKnobs are the parts of /proc that change the kernel rather than describe the step's
// processes (sysctls such as kernel.core_pattern, the SysRq trigger, interrupt and bus settings):
// read-only in the sandbox whatever the build's uid.
var procKnobs = []string{"/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs"}

// Prepare returns bwrap running path with args inside the jail.
func (b *Bubblewrap) Prepare(j Jail, path string, args ...string) (*Step, error) {
	cmd, err := b.command(j, path, args...)
	if err != nil {
		return nil, err
	}
	s := &Step{Cmd: cmd}
	if err := asBuildUser(s, b.UIDs, j, jailDirs(j, b.ReadOnly, []string{b.Path})); err != nil {
		s.Done()
		return nil, err
	}
	return s, nil
}

// command is the bwrap command line for the jail.
func (b *Bubblewrap) command(j Jail, path string, args ...string) (*exec.Cmd, error) {
	if err := b.Network.check(); err != nil {
		return nil, err
	}
	for _, d := range slices.Concat([]string{j.Dir, j.Home, j.Tmp}, j.ReadOnly, j.Writable, j.Protected) {
		if !filepath.IsAbs(d) {
			return nil, fmt.Errorf("sandbox: jail path %q is not absolute", d)
		}
	}
	env := b.env(j)
	bargs := []string{
		"--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
		"--disable-userns",
		"--uid", strconv.Itoa(buildUID), "--gid", strconv.Itoa(buildUID), "--hostname", "kiln-build",
		"--ro-bind", "/usr", "/usr",
	}
	if b.Network.isolated() {
		bargs = append(bargs, "--unshare-net")
	}
	for _, d := range systemLinks {
		fi, err := os.Lstat(d)
		switch {
		case err != nil:
		case fi.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(d)
			if err != nil {
				return nil, fmt.Errorf("sandbox: %w", err)
			}
			bargs = append(bargs, "--symlink", target, d)
		case fi.IsDir():
			bargs = append(bargs, "--ro-bind", d, d)
		}
	}
	for _, f := range etcFiles {
		bargs = append(bargs, "--ro-bind-try", f, f)
	}
	bargs = append(bargs,
		"--proc", "/proc",
	)
	for _, k := range procKnobs {
		// The host's /proc/sys shows each reader its own namespaces' values (host name,
		// network); bound read-only over the fresh /proc's, nothing under it can be written.
		bargs = append(bargs, "--ro-bind-try", k, k)
	}
	bargs = append(bargs,
		"--dev", "/dev",
		"--size", strconv.Itoa(tmpSize), "--tmpfs", "/dev/shm",
		"--size", strconv.Itoa(tmpSize), "--tmpfs", "/tmp",
		// Who "build" is, for tools that look the user up.
		"--ro-bind-data", "3", "/etc/passwd", "--ro-bind-data", "4", "/etc/group",
	)
	for _, d := range append(slices.Clone(b.ReadOnly), j.ReadOnly...) {
		bargs = append(bargs, "--ro-bind", d, d)
	}
	for _, d := range j.Writable {
		bargs = append(bargs, "--bind", d, d)
	}
	for _, p := range j.Protected {
		bargs = append(bargs, "--ro-bind", p, p)
	}
	bargs = append(bargs, "--clearenv")
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		bargs = append(bargs, "--setenv", name, value)
	}
	bargs = append(bargs, "--chdir", j.Dir, "--", path)
	bargs = append(bargs, args...)

	passwd := fmt.Sprintf("root:x:0:0:root:/root:/bin/sh\n%s:x:%d:%d:kiln build:%s:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
		buildUser, buildUID, buildUID, j.Home)
	group := fmt.Sprintf("root:x:0:\n%s:x:%d:\nnogroup:x:65534:\n", buildUser, buildUID)
	files, err := dataFiles(passwd, group)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(b.Path, bargs...)
	cmd.Dir = j.Dir
	cmd.Env = env
	cmd.ExtraFiles = files // fds 3 and 4; exec closes the parent's copies after Start
	return cmd, nil
}

// env is the step's whole environment.
func (b *Bubblewrap) env(j Jail) []string {
	env := []string{
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"HOME=" + j.Home, "TMPDIR=" + j.Tmp, "USER=" + buildUser, "LOGNAME=" + buildUser,
		"LANG=C.UTF-8", "LC_ALL=C.UTF-8", "TERM=dumb",
	}
	env = append(env, j.Env...)
	for _, name := range b.PassEnv {
		if v, ok := os.LookupEnv(name); ok {
			env = append(env, name+"="+v)
		}
	}
	return env
}

// dataFiles returns pipes whose read ends hold each text (small enough for the pipe's buffer) and
// are then closed for writing.
func dataFiles(texts ...string) ([]*os.File, error) {
	var files []*os.File
	for _, t := range texts {
		r, w, err := os.Pipe()
		if err != nil {
			closeAll(files)
			return nil, fmt.Errorf("sandbox: %w", err)
		}
		_, err = w.WriteString(t)
		w.Close()
		if err != nil {
			r.Close()
			closeAll(files)
			return nil, fmt.Errorf("sandbox: %w", err)
		}
		files = append(files, r)
	}
	return files, nil
}

func closeAll(files []*os.File) {
	for _, f := range files {
		f.Close()
	}
}
