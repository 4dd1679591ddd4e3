package serve

import (
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"

	"github.com/kilnbuild/kiln/shared/diskspace"
	"github.com/kilnbuild/kiln/shared/sandbox/cgroup"
	"github.com/kilnbuild/kiln/shared/settings"
)

// minBuildMemory is the smallest KILN_BUILD_MEMORY: less cannot run RunUAT at all.
const minBuildMemory = 64 << 20

// applyBuildMemory reads KILN_BUILD_MEMORY.
func applyBuildMemory(c *Config, v string) error {
	switch v {
	case "off":
		c.BuildMemory = 0
		return nil
	case "auto":
		c.BuildMemory = autoBuildMemory(cgroup.MachineMemory(), c.Workers)
		return nil
	}
	n, err := settings.ParseSize(v)
	if err != nil {
		return fmt.Errorf("must be auto, off or a size such as 8GiB or 512MiB: %w", err)
	}
	if n < minBuildMemory {
		return fmt.Errorf("%s is too little to run a build: at least 64MiB", v)
	}
	c.BuildMemory = n
	return nil
}

// applyBuildPids reads KILN_BUILD_PIDS.
func applyBuildPids(c *Config, v string) error {
	switch v {
	case "off":
		c.BuildPids = 0
		return nil
	case "auto":
		c.BuildPids = autoBuildPids(runtime.NumCPU())
		return nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 16 {
		return errors.New("must be auto, off or a whole number, 16 or more")
	}
	c.BuildPids = n
	return nil
}

// applyBuildCPUWeight reads KILN_BUILD_CPU_WEIGHT.
func applyBuildCPUWeight(c *Config, v string) error {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 10000 {
		return errors.New("must be a whole number from 1 to 10000")
	}
	c.BuildCPUWeight = n
	return nil
}

// applyDiskReserve reads KILN_DISK_RESERVE.
func applyDiskReserve(c *Config, v string) error {
	c.DiskReserve = DiskReserve{}
	if v == "0" || v == "off" {
		return nil
	}
	if p, ok := strings.CutSuffix(v, "%"); ok {
		f, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || f <= 0 || f >= 100 {
			return errors.New("a percentage must be above 0% and below 100%")
		}
		c.DiskReserve.Percent = f
		return nil
	}
	n, err := settings.ParseSize(v)
	if err != nil {
		return fmt.Errorf("must be a size such as 20GiB, a percentage such as 5%%, or 0: %w", err)
	}
	c.DiskReserve.Bytes = n
	return nil
}

// autoBuildMemory is KILN_BUILD_MEMORY's default: 90% of the machine's memory shared by the
// builds that run at once, in whole MiB; 0 (no limit) when the machine's memory is unknown.
func autoBuildMemory(machine int64, workers int) int64 {
	if machine <= 0 || workers < 1 {
		return 0
	}
	n := machine / 10 * 9 / int64(workers)
	return max(n>>20<<20, minBuildMemory)
}

// autoBuildPids is KILN_BUILD_PIDS's default.
func autoBuildPids(cores int) int64 { return max(1024, 256*int64(cores)) }

// DiskReserve is KILN_DISK_RESERVE: Bytes, or a Percent of the volume's size (Percent wins
// when set).
type DiskReserve struct {
	Bytes   int64
	Percent float64
}

// of is the reserve in bytes on the volume holding dir.
func (d DiskReserve) of(dir string) (int64, error) {
	if d.Percent == 0 {
		return d.Bytes, nil
	}
	s, err := diskspace.Of(dir)
	if err != nil {
		return 0, fmt.Errorf("KILN_DISK_RESERVE: %w", err)
	}
	return int64(float64(s.Total) * d.Percent / 100), nil
}

func (d DiskReserve) String() string {
	if d.Percent > 0 {
		return strconv.FormatFloat(d.Percent, 'f', -1, 64) + "%"
	}
	return diskspace.Format(d.Bytes)
}
