package serve

import (
	"io"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/sandbox/cgroup"
)

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
	if c.BuildPids < 1024 || c.BuildCPUWeight != 100 || c.DiskReserve != (DiskReserve{Percent: 5}) {
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
		{"KILN_DISK_RESERVE", "20GiB", func(c Config) bool { return c.DiskReserve == DiskReserve{Bytes: 20 << 30} }},
		{"KILN_DISK_RESERVE", "0", func(c Config) bool { return c.DiskReserve == DiskReserve{} }},
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
