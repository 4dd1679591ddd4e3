// Package diskspace tells how much room a file system has left.
package diskspace

import "fmt"

// Space is a file system's size and what is free of it for an unprivileged writer.
type Space struct {
	Free, Total int64
}

// Of returns the space of the file system holding path.
func Of(path string) (Space, error) {
	s, err := of(path)
	if err != nil {
		return Space{}, fmt.Errorf("diskspace: %s: %w", path, err)
	}
	return s, nil
}

// Format writes a size for people: "512 MiB", "79.3 GiB".
func Format(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d bytes", n)
	}
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB"}
	f, i := float64(n)/unit, 0
	for f >= unit && i < len(units)-1 {
		f /= unit
		i++
	}
	if f == float64(int64(f)) {
		return fmt.Sprintf("%d %s", int64(f), units[i])
	}
	return fmt.Sprintf("%.1f %s", f, units[i])
}
