package awslocalapp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/sandbox"
)

// TestHostRunAs: aws-local's hosts run as the run-as of the template's CodeBuild buildspec (none:
// as aws-local's user); as root it refuses to start when that user could not read what a host
// runs, naming the path.
func TestHostRunAs(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} { // the test's temporary directories are 0700
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	shared := filepath.Join(dir, "shared")
	private := filepath.Join(dir, "private")
	for p, mode := range map[string]os.FileMode{shared: 0o755, private: 0o700} {
		if err := os.Mkdir(p, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(private, "engines"), 0o755); err != nil {
		t.Fatal(err)
	}
	template := func(buildspec string) string {
		b, _ := json.Marshal(map[string]any{"Resources": map[string]any{
			"Hosts": map[string]any{"Type": "AWS::CodeBuild::Project", "Properties": map[string]any{"Source": map[string]any{"Type": "NO_SOURCE", "BuildSpec": buildspec}}},
			"Other": map[string]any{"Type": "AWS::S3::Bucket"},
		}})
		p := filepath.Join(dir, "template.json")
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name, buildspec string
		readable        []string
		user, err       string // err: a part of the error; as root only
	}{
		{name: "run-as kiln", buildspec: "version: 0.2\nrun-as: kiln\n", readable: []string{shared}, user: "kiln"},
		{name: "no run-as: root", buildspec: "version: 0.2\n", readable: []string{private}},
		{name: "a private engines dir", buildspec: "version: 0.2\nrun-as: kiln\n", readable: []string{shared, private},
			err: "cannot read " + private + ": its mode is -rwx------"},
		{name: "behind a private directory", buildspec: "version: 0.2\nrun-as: kiln\n", readable: []string{filepath.Join(private, "engines")},
			err: "its directory " + private + " is -rwx------ (others cannot enter it)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := hostRunAs(template(tc.buildspec), sandbox.DefaultUIDs, tc.readable...)
			if tc.err != "" && os.Geteuid() == 0 {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("hostRunAs = %+v, %v; want an error with %q", r, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := ""; r != nil {
				got = r.User
				if got != tc.user || r.Take == nil {
					t.Fatalf("run-as %q (take %v), want %q", got, r.Take != nil, tc.user)
				}
			} else if tc.user != "" {
				t.Fatalf("no run-as, want %q", tc.user)
			}
		})
	}
	t.Run("the stack's buildspec", func(t *testing.T) {
		spec, err := os.ReadFile("../../../buildspec/buildspec.yml")
		if err != nil {
			t.Fatal(err)
		}
		r, err := hostRunAs(template(string(spec)), sandbox.DefaultUIDs)
		if err != nil || r == nil || r.User != "kiln" {
			t.Fatalf("hostRunAs = %+v, %v; want kiln", r, err)
		}
	})
}
