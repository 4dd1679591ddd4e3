//go:build !windows

package main

// checkSecretFile does nothing outside Windows: there the file's mode is checked (secretSetting).
func checkSecretFile(path, setting string) error { return nil }
