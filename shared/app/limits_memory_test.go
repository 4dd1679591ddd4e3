package app

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/sandbox/cgroup"
)

func TestBuildOverItsMemoryLimitFailsAndTheNextBuildRuns(t *testing.T) {
	if m := cgroup.Open(nil); !m.Applies(cgroup.Memory) {
		t.Skipf("this host cannot apply a memory limit: %v", m.Unavailable())
	}
	w := newWorld(t, func(c *Config) { c.BuildMemory = 64 << 20 })
	pid := w.addShooter(t)
	w.shooter.Commit("hungry", "Load every asset at once", "Ada Lovelace", map[string]string{"Shooter/FakeUAT.env": "FAKE_UAT_ALLOC_MB=256\n"})
	hungry := w.addSetting(t, pid, map[string]any{"branch": "hungry"})["id"].(string)
	plain := w.addSetting(t, pid, nil)["id"].(string)

	id := w.trigger(t, pid, hungry, "")
	b := w.waitEnded(t, id)
	want := "memory limit: the build used more than KILN_BUILD_MEMORY (64 MiB) and was stopped"
	if b["status"] != "failed" || b["failureReason"] != want {
		t.Fatalf("build over its memory: %v %q, want failed with %q\n%s", b["status"], b["failureReason"], want, w.logText(t, id))
	}
	next := w.waitEnded(t, w.trigger(t, pid, plain, ""))
	if next["status"] != "complete" {
		t.Fatalf("the next build: %v %v", next["status"], next["failureReason"])
	}
	if !strings.Contains(w.logs.String(), `"msg":"build limits","memory":"64 MiB"`) {
		t.Errorf("the start log does not say which limits apply:\n%s", w.logs.String())
	}
}

func TestBuildDoesNotStartWithLessFreeThanTheDiskReserve(t *testing.T) {
	w := newWorld(t, func(c *Config) { c.DiskReserve = diskReserve{bytes: 1 << 60} })
	pid := w.addShooter(t)
	sid := w.addSetting(t, pid, nil)["id"].(string)
	id := w.trigger(t, pid, sid, "")
	b := w.waitEnded(t, id)
	reason, _ := b["failureReason"].(string)
	if b["status"] != "failed" || !strings.HasPrefix(reason, "disk space: the data volume has ") ||
		!strings.HasSuffix(reason, " free, less than KILN_DISK_RESERVE (1024 PiB); the build did not start") {
		t.Fatalf("build with too little disk: %v %q", b["status"], reason)
	}
	// Nothing was checked out.
	if _, err := os.Stat(filepath.Join(w.cfg.Data, "workspaces")); !os.IsNotExist(err) {
		t.Errorf("a workspace was made: %v", err)
	}
}

func TestBuildLimitSettings(t *testing.T) {
	load := func(env map[string]string) (Config, error) {
		return LoadConfig(nil, func(k string) string { return env[k] }, io.Discard)
	}
	c, err := load(map[string]string{"KILN_WORKERS": "2"})
	if err != nil {
		t.Fatal(err)
	}
	if want := autoBuildMemory(cgroup.MachineMemory(), 2); c.BuildMemory != want || want == 0 {
		t.Errorf("default memory %d, want %d (90%% of the machine's / 2)", c.BuildMemory, want)
	}
	if c.BuildPids < 1024 || c.BuildCPUWeight != 100 || c.DiskReserve != (diskReserve{percent: 5}) {
		t.Errorf("defaults: pids %d, cpu weight %d, disk reserve %+v", c.BuildPids, c.BuildCPUWeight, c.DiskReserve)
	}
	for _, tc := range []struct {
		env, value string
		check      func(Config) bool
	}{
		{"KILN_BUILD_MEMORY", "2GiB", func(c Config) bool { return c.BuildMemory == 2<<30 }},
		{"KILN_BUILD_MEMORY", "off", func(c Config) bool { return c.BuildMemory == 0 }},
		{"KILN_BUILD_PIDS", "500", func(c Config) bool { return c.BuildPids == 500 }},
		{"KILN_BUILD_CPU_WEIGHT", "50", func(c Config) bool { return c.BuildCPUWeight == 50 }},
		{"KILN_DISK_RESERVE", "20GiB", func(c Config) bool { return c.DiskReserve == diskReserve{bytes: 20 << 30} }},
		{"KILN_DISK_RESERVE", "0", func(c Config) bool { return c.DiskReserve == diskReserve{} }},
	} {
		c, err := load(map[string]string{tc.env: tc.value})
		if err != nil || !tc.check(c) {
			t.Errorf("%s=%s: %v %+v", tc.env, tc.value, err, c)
		}
	}
	for _, tc := range []struct{ env, value string }{
		{"KILN_BUILD_MEMORY", "2GB"}, {"KILN_BUILD_MEMORY", "1MiB"}, {"KILN_BUILD_PIDS", "-1"}, {"KILN_BUILD_PIDS", "lots"},
		{"KILN_BUILD_CPU_WEIGHT", "0"}, {"KILN_BUILD_CPU_WEIGHT", "10001"}, {"KILN_DISK_RESERVE", "150%"}, {"KILN_DISK_RESERVE", "much"},
	} {
		if _, err := load(map[string]string{tc.env: tc.value}); err == nil || !strings.Contains(err.Error(), tc.env) {
			t.Errorf("%s=%s: %v, want an error naming the setting", tc.env, tc.value, err)
		}
	}
}
