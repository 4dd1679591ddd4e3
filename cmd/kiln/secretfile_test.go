package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSecretSetting: a secret comes from its variable, or from a file readable by its owner
// only, or from standard input ("-"); a file others can read, an empty one, a directory, or both
// ways at once are refused with the reason.
func TestSecretSetting(t *testing.T) {
	dir := t.TempDir()
	file := func(name, content string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name, value, file, stdin string
		want, wantErr            string
	}{
		{name: "variable", value: "kagent_env", want: "kagent_env"},
		{name: "file 0600 with a newline", file: file("ok", "kagent_file\n", 0o600), want: "kagent_file"},
		{name: "file 0400", file: file("ro", "kagent_ro", 0o400), want: "kagent_ro"},
		{name: "standard input", file: "-", stdin: "kagent_stdin\n", want: "kagent_stdin"},
		{name: "file others can read", file: file("open", "kagent_open", 0o644), wantErr: "chmod 600"},
		{name: "file its group can read", file: file("group", "kagent_group", 0o640), wantErr: "chmod 600"},
		{name: "both", value: "kagent_env", file: file("both", "kagent_file", 0o600), wantErr: "not both"},
		{name: "empty file", file: file("empty", "\n", 0o600), wantErr: "is empty"},
		{name: "two lines", file: file("two", "a\nb\n", 0o600), wantErr: "more than one line"},
		{name: "a directory", file: dir, wantErr: "not a regular file"},
		{name: "missing file", file: filepath.Join(dir, "nope"), wantErr: "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := secretSetting(tc.value, tc.file, "KILN_AGENT_TOKEN", "KILN_AGENT_TOKEN_FILE", strings.NewReader(tc.stdin))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || got != "" {
					t.Fatalf("got %q, err %v; want an error saying %q", got, err, tc.wantErr)
				}
				if strings.Contains(err.Error(), "kagent_") {
					t.Errorf("the error shows the secret: %v", err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}
