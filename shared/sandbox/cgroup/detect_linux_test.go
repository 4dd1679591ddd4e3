package cgroup

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// fakeHost writes a mountinfo and a /proc/self/cgroup naming cgroup file systems "mounted" in a
// temporary directory, with the given files below them.
func fakeHost(t *testing.T, mountinfo, selfCgroup string, files map[string]string) procFiles {
	t.Helper()
	root := t.TempDir()
	for path, content := range files {
		p := filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mi := filepath.Join(root, "mountinfo")
	if err := os.WriteFile(mi, []byte(strings.ReplaceAll(mountinfo, "$ROOT", root)), 0o644); err != nil {
		t.Fatal(err)
	}
	cg := filepath.Join(root, "cgroup")
	if err := os.WriteFile(cg, []byte(selfCgroup), 0o644); err != nil {
		t.Fatal(err)
	}
	return procFiles{mi, cg}
}

func TestOpenFindsWhatTheHostAllows(t *testing.T) {
	const v2Mount = "40 30 0:37 / $ROOT/cg rw,relatime - cgroup2 cgroup2 rw\n"
	const service = "/system.slice/kiln.service"
	for _, tc := range []struct {
		name, mountinfo, self string
		files                 map[string]string
		available             []string // controllers applied
		unavailable           string   // in every reason
	}{
		{
			name: "cgroup v1, memory below the container's group",
			mountinfo: "34 30 0:31 / $ROOT/memory rw - cgroup cgroup rw,memory\n" +
				"38 30 0:35 / $ROOT/pids rw - cgroup cgroup rw,pids\n" +
				"31 30 0:28 / $ROOT/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n",
			self:      "4:memory:/process_api/x\n8:pids:/\n1:cpu,cpuacct:/\n0::/\n",
			files:     map[string]string{"memory/process_api/x/cgroup.procs": "", "pids/cgroup.procs": "", "cpu,cpuacct/cgroup.procs": ""},
			available: []string{CPU, Memory, Pids},
		},
		{
			name:      "cgroup v2, delegated by systemd",
			mountinfo: v2Mount, self: "0::" + service + "\n",
			files: map[string]string{
				"cg" + service + "/cgroup.controllers":     "cpuset cpu io memory pids",
				"cg" + service + "/cgroup.subtree_control": "",
				// (a real cgroup file system makes it with the directory)
				"cg" + service + "/" + BuildsDir + "/cgroup.subtree_control": "",
			},
			available: []string{CPU, Memory, Pids},
		},
		{
			name:      "cgroup v2, not delegated",
			mountinfo: v2Mount, self: "0::" + service + "\n",
			files:       map[string]string{"cg" + service + "/cgroup.controllers": "", "cg" + service + "/cgroup.subtree_control": ""},
			unavailable: "Delegate=yes",
		},
		{
			name:        "no cgroups",
			mountinfo:   "30 22 0:27 / /sys rw - sysfs sysfs rw\n",
			self:        "",
			unavailable: "this host has no",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := open(fakeHost(t, tc.mountinfo, tc.self, tc.files), nil)
			var got []string
			for _, c := range controllers {
				if m.Applies(c) {
					got = append(got, c)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.available) {
				t.Errorf("applies %v, want %v (unavailable: %v)", got, tc.available, m.Unavailable())
			}
			if len(tc.available)+len(m.Unavailable()) != len(controllers) {
				t.Errorf("available %v and unavailable %v do not cover the three limits", m.Available(), m.Unavailable())
			}
			for _, why := range m.Unavailable() {
				if !strings.Contains(why, tc.unavailable) || tc.unavailable == "" {
					t.Errorf("reason %q, want it to say %q", why, tc.unavailable)
				}
			}
			for _, a := range m.Available() {
				if !strings.Contains(a, "/"+BuildsDir) {
					t.Errorf("builds' groups not in %s: %s", BuildsDir, a)
				}
			}
		})
	}
}

// TestV2GroupStartsTheCommandInside runs the cgroup v2 path (CgroupFD) on the unified hierarchy,
// where this host has one, with no controller: the command, a non-root session leader, must start
// in the group.
func TestV2GroupStartsTheCommandInside(t *testing.T) {
	mounts, err := readMounts("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	mnt, ok := mounts.v2()
	own, _ := readOwnGroups("/proc/self/cgroup")
	if !ok || own[""] == "" {
		t.Skip("no cgroup v2 hierarchy on this host")
	}
	ownDir := mnt.dir(own[""])
	m := &Manager{hier: []hierarchy{{v2: true, own: ownDir, base: filepath.Join(ownDir, BuildsDir)}}}
	if err := os.Mkdir(m.hier[0].base, 0o755); err != nil && !os.IsExist(err) {
		t.Skipf("cannot make a group in the v2 hierarchy here: %v", err)
	}
	name := uniqueName(t)
	g, err := m.New(name, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/cat", "/proc/self/cgroup")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Credential: &syscall.Credential{Uid: 200124, Gid: 200124}}
	if err := g.Place(cmd); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	want := "0::" + filepath.Join(own[""], BuildsDir, dirName(name)) + "\n"
	if !strings.Contains(string(out), want) {
		t.Errorf("want %q in\n%s", want, out)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(m.hier[0].base, name)); !os.IsNotExist(err) {
		t.Errorf("the group is left: %v", err)
	}
}
