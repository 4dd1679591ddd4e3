//go:build !linux

package main

// hideProcess does nothing outside Linux (see docs/agents.md for what protects a Windows agent).
func hideProcess() error { return nil }
