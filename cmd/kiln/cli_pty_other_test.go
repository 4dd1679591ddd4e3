//go:build !linux

package main

import (
	"errors"
	"os"
)

// openPTY fails: the test opens pseudo-terminals the Linux way only.
func openPTY() (ptm, pts *os.File, err error) {
	return nil, nil, errors.New("pseudo-terminals are opened the Linux way only")
}
