//go:build !linux && !darwin && !freebsd

package main

import (
	"errors"
	"os"
)

// isTerminal is false where kiln cannot ask the terminal: no progress bar, no prompt.
func isTerminal(*os.File) bool { return false }

func echoOff(*os.File) (func(), error) { return nil, errors.New("not supported here") }
