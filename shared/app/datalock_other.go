//go:build !unix

package app

// dataLock is not taken on systems without flock; kiln serve runs on Linux and macOS.
type dataLock struct{}

func lockDataDir(string) (*dataLock, error) { return &dataLock{}, nil }

func (l *dataLock) release() {}
