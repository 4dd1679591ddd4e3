//go:build !unix

package sandbox

// lockUID holds uid for this process; builds run as other uids only on Unix.
func lockUID(int) (unlock func(), ok bool, err error) { return func() {}, true, nil }
