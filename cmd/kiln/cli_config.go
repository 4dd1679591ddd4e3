package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/kilnbuild/kiln/shared/client"
	"github.com/kilnbuild/kiln/shared/settings"
)

// cliConfig is where the customer commands find the service and the token: KILN_URL and
// KILN_TOKEN from the environment, each over what kiln login saved.
type cliConfig struct {
	URL   string `json:"url"`
	Token string `json:"token"`
}

// cliConfigPath is the file kiln login writes: <user config dir>/kiln/config.json.
func cliConfigPath() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("find the user's config directory: %w", err)
	}
	return filepath.Join(dir, "kiln", "config.json"), nil
}

// loadCLIConfig reads the saved login (if any) and lets the environment override it.
func loadCLIConfig(getenv func(string) string) (cliConfig, error) {
	var c cliConfig
	path, err := cliConfigPath()
	if err == nil {
		raw, err := os.ReadFile(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return c, fmt.Errorf("read %s: %w", path, err)
		default:
			if err := json.Unmarshal(raw, &c); err != nil {
				return c, fmt.Errorf("read %s: not the JSON kiln login writes: %w", path, err)
			}
		}
	}
	if v := settings.URL.Get(getenv); v != "" {
		c.URL = v
	}
	if v := settings.Token.Get(getenv); v != "" {
		c.Token = v
	}
	return c, nil
}

// apiClient is a client of the configured service, or an error saying what is missing.
func apiClient(getenv func(string) string) (*client.Client, error) {
	c, err := loadCLIConfig(getenv)
	if err != nil {
		return nil, err
	}
	if c.URL == "" || c.Token == "" {
		return nil, errors.New("no kiln service configured: set KILN_URL and KILN_TOKEN, or run kiln login")
	}
	return client.New(c.URL, c.Token, nil)
}

// saveCLIConfig writes the login, readable by the user only (0600, in a 0700 directory). It
// writes a temporary file and renames it, so a reader never sees half a file.
func saveCLIConfig(c cliConfig) (string, error) {
	path, err := cliConfigPath()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", fmt.Errorf("save the login: %w", err)
	}
	raw, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return "", fmt.Errorf("save the login: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".config-*.json")
	if err != nil {
		return "", fmt.Errorf("save the login: %w", err)
	}
	defer os.Remove(tmp.Name()) // after the rename, there is nothing to remove
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return "", fmt.Errorf("save the login: %w", err)
	}
	if _, err := tmp.Write(append(raw, '\n')); err != nil {
		tmp.Close()
		return "", fmt.Errorf("save the login: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return "", fmt.Errorf("save the login: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", fmt.Errorf("save the login: %w", err)
	}
	return path, nil
}
