package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/kilnbuild/kiln/shared/settings"
)

// The agent's configuration file: `kiln agent --config PATH` (or KILN_AGENT_CONFIG=PATH) reads
// settings from a file of KEY=VALUE lines, the same names as the environment (KILN_HOST_URL,
// KILN_AGENT_ENGINES, ...). It is how a service reads its settings where the service manager
// passes no environment it can change: kiln's hosted Windows hosts' user data writes the file the
// AMI's `kiln-agent` service names with --config (a machine environment variable set by the user
// data would reach the service only after a reboot). A variable set in the environment wins over
// the file; flags win over both. Blank lines and lines starting with # are ignored; anything
// else that is not KILN_<NAME>=<value> is an error, and nothing runs.

// agentConfigEnv is the environment variable naming the agent's configuration file.
var agentConfigEnv = settings.AgentConfig.Name

// withAgentConfig takes --config PATH (or --config=PATH) out of a `kiln agent` command line and
// returns the other arguments and a getenv that falls back to the file's settings. Without
// --config and KILN_AGENT_CONFIG it returns args and getenv as they are.
func withAgentConfig(args []string, getenv func(string) string) ([]string, func(string) string, error) {
	path := settings.AgentConfig.Get(getenv)
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--config" || a == "-config":
			if i+1 >= len(args) || args[i+1] == "" {
				return nil, nil, fmt.Errorf("kiln agent: %s needs a file", a)
			}
			path = args[i+1]
			i++
		case strings.HasPrefix(a, "--config=") || strings.HasPrefix(a, "-config="):
			path = a[strings.Index(a, "=")+1:]
			if path == "" {
				return nil, nil, fmt.Errorf("kiln agent: %s needs a file", a)
			}
		default:
			rest = append(rest, a)
		}
	}
	if path == "" {
		return args, getenv, nil
	}
	settings, err := readAgentConfig(path)
	if err != nil {
		return nil, nil, err
	}
	return rest, func(key string) string {
		if v := getenv(key); v != "" {
			return v
		}
		return settings[key]
	}, nil
}

// readAgentConfig reads the KEY=VALUE lines of an agent configuration file. Values are taken as
// written (no quotes, no expansion); errors name the line, never a value (a token may be there).
func readAgentConfig(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("kiln agent: read the configuration file: %w", err)
	}
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf")) // a UTF-8 byte order mark (Windows editors)
	settings := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		key = strings.TrimSpace(key)
		if !ok || !validConfigKey(key) {
			return nil, fmt.Errorf("kiln agent: %s line %d: want KILN_<NAME>=<value>", path, n)
		}
		if key == agentConfigEnv {
			return nil, fmt.Errorf("kiln agent: %s line %d: %s cannot name another file", path, n, key)
		}
		if _, dup := settings[key]; dup {
			return nil, fmt.Errorf("kiln agent: %s line %d: %s is set twice", path, n, key)
		}
		settings[key] = strings.TrimSpace(value)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("kiln agent: read %s: %w", path, err)
	}
	return settings, nil
}

// validConfigKey reports whether key is KILN_ followed by upper-case letters, digits and _.
func validConfigKey(key string) bool {
	name, ok := strings.CutPrefix(key, "KILN_")
	if !ok || name == "" {
		return false
	}
	for _, r := range name {
		if !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}
