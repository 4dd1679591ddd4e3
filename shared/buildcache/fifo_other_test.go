//go:build !unix

package buildcache

import "errors"

// mkfifo: no named pipes by path here.
func mkfifo(string) error { return errors.ErrUnsupported }
