//go:build !unix

package nofollow_test

import "errors"

// mkfifo: no named pipes by path here.
func mkfifo(string) error { return errors.ErrUnsupported }
