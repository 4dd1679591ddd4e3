//go:build !linux

package sandbox

// startReachable calls start: only Linux has mount namespaces to make paths reachable with, so
// elsewhere the build uid must be able to search the jail's paths itself.
func startReachable(_ int, _ []string, start func() error) error { return start() }
