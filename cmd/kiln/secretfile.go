package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
)

// maxSecret bounds what is read of a secret's file: tokens and credentials are far shorter.
const maxSecret = 4 << 10

// secretSetting is a secret setting given either in the environment (KILN_AGENT_TOKEN) or, better,
// in a file (KILN_AGENT_TOKEN_FILE). A process's environment stays readable for its whole life in
// /proc/<pid>/environ (to its user and root), and is what every child inherits unless filtered; a
// file is read once, at start, and the secret then lives only in this process's memory.
//
// The file must be readable by its owner only: mode 0600 or 0400; on Windows, an ACL that lets
// only SYSTEM, Administrators and the agent's own account read it (checkSecretFile), so that a
// build running as an account of its own cannot. "-" reads the secret from standard input: a service manager can then open
// a file the agent's own user cannot read (systemd's StandardInput=file:...).
func secretSetting(value, file, valueName, fileName string, stdin io.Reader) (string, error) {
	if file == "" {
		return value, nil
	}
	if value != "" {
		return "", fmt.Errorf("set %s or %s, not both", valueName, fileName)
	}
	if file == "-" {
		return readSecret(stdin, fileName+" (standard input)")
	}
	f, err := os.Open(file)
	if err != nil {
		return "", fmt.Errorf("%s: %w", fileName, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("%s: %w", fileName, err)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s: %s is not a regular file", fileName, file)
	}
	if perm := fi.Mode().Perm(); runtime.GOOS != "windows" && perm&0o077 != 0 {
		return "", fmt.Errorf("%s: %s can be read by other users than its owner (mode %#o): chmod 600 it", fileName, file, perm)
	}
	if err := checkSecretFile(file, fileName); err != nil {
		return "", err
	}
	return readSecret(f, fileName+" "+file)
}

// readSecret reads one secret (surrounding white space, a final newline, trimmed) from r.
func readSecret(r io.Reader, what string) (string, error) {
	raw, err := io.ReadAll(io.LimitReader(r, maxSecret+1))
	if err != nil {
		return "", fmt.Errorf("read %s: %w", what, err)
	}
	if len(raw) > maxSecret {
		return "", fmt.Errorf("%s holds more than a secret (over %d bytes)", what, maxSecret)
	}
	s := strings.TrimSpace(string(raw))
	if s == "" {
		return "", fmt.Errorf("%s is empty", what)
	}
	if strings.ContainsAny(s, "\r\n") {
		return "", errors.New(what + " holds more than one line")
	}
	return s, nil
}
