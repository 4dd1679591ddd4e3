//go:build !unix

package onemachine

// DataLock is not taken on systems without flock; kiln serve runs on Linux and macOS.
type DataLock struct{}

// LockDataDir takes no lock here.
func LockDataDir(string) (*DataLock, error) { return &DataLock{}, nil }

// Release does nothing here.
func (l *DataLock) Release() {}
