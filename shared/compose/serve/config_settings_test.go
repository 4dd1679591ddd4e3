package serve

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/sandbox"
	"github.com/kilnbuild/kiln/shared/settings"
	"github.com/kilnbuild/kiln/shared/settings/settingstest"
)

// TestServeSettingsFollowTheTable: kiln serve reads exactly the registry's rows marked for it,
// as the rows themselves (name, default, meaning), and refuses a bad value of each with an
// error naming it.
func TestServeSettingsFollowTheTable(t *testing.T) {
	serve := map[string]setting{}
	for _, s := range serveSettings {
		if _, dup := serve[s.env]; dup {
			t.Errorf("%s: twice in serveSettings", s.env)
		}
		serve[s.env] = s
	}
	for _, r := range settings.Table {
		s, ok := serve[r.Name]
		delete(serve, r.Name)
		if r.ReadBy&settings.Serve == 0 {
			if ok {
				t.Errorf("%s: kiln serve reads it, the registry says only %v do", r.Name, r.ReadBy)
			}
			continue
		}
		if !ok {
			t.Errorf("%s: the registry marks it for kiln serve, which does not read it", r.Name)
			continue
		}
		if s.row != r || s.env != r.Name || s.def != r.Default || s.usage != r.Help {
			t.Errorf("%s: kiln serve's row %+v differs from the registry's %+v", r.Name, s.row, r)
		}
		bad, ok := settingstest.BadValues[r.Kind]
		if !ok {
			continue
		}
		_, err := LoadConfig(nil, func(k string) string {
			if k == r.Name {
				return bad
			}
			return ""
		}, io.Discard)
		if err == nil || !strings.HasPrefix(err.Error(), r.Name+":") {
			t.Errorf("%s=%q: error %v, want one naming it", r.Name, bad, err)
		}
	}
	for name := range serve {
		t.Errorf("%s: kiln serve reads it, the registry has no row", name)
	}
	if settings.BuildUIDs.Default != sandbox.DefaultUIDs.String() {
		t.Errorf("KILN_BUILD_UIDS: the registry's default %q is not sandbox.DefaultUIDs %v", settings.BuildUIDs.Default, sandbox.DefaultUIDs)
	}
}

// TestUsageListsTheRegistry: `kiln serve -h` shows each of kiln serve's rows once, with its
// flag, default and meaning.
func TestUsageListsTheRegistry(t *testing.T) {
	var out bytes.Buffer
	if _, err := LoadConfig([]string{"-h"}, func(string) string { return "" }, &out); err == nil {
		t.Fatal("-h: no error")
	}
	lines := map[string]string{}
	for _, l := range strings.Split(out.String(), "\n") {
		if f := strings.Fields(l); len(f) > 2 && strings.HasPrefix(f[0], "--") {
			lines[f[1]] = l
		}
	}
	for _, r := range settings.Table {
		if r.ReadBy&settings.Serve == 0 {
			continue
		}
		l, ok := lines[r.Name]
		delete(lines, r.Name)
		def := r.Default
		if def == "" {
			def = "-"
		}
		if !ok || !strings.Contains(l, "--"+flagName(r.Name)+" ") || !strings.Contains(l, " "+def+" ") || !strings.HasSuffix(l, r.Help) {
			t.Errorf("%s: -h shows %q", r.Name, l)
		}
	}
	for name := range lines {
		t.Errorf("-h shows %s, which the registry does not mark for kiln serve", name)
	}
}

// readmeDefaults are the defaults the README's table writes as what they follow rather than
// the registry's "" (LoadConfig fills them in).
var readmeDefaults = map[string]string{
	settings.PublicURL.Name:     "http://$KILN_ADDR",
	settings.OrgMaxRunning.Name: "KILN_WORKERS",
}

// TestREADMETableIsTheRegistry: the README's table of kiln serve's settings ("Running `kiln
// serve`") has one row per registry row marked for kiln serve (a README row may name two,
// comma-separated), with the registry's default, and no other.
func TestREADMETableIsTheRegistry(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(raw), "## Running `kiln serve`")
	if !ok {
		t.Fatal("README.md: no section \"Running `kiln serve`\"")
	}
	_, table, ok := strings.Cut(section, "| variable | default | meaning |\n|---|---|---|\n")
	if !ok {
		t.Fatal("README.md: no settings table under \"Running `kiln serve`\"")
	}
	readme := map[string]string{}
	for _, line := range strings.Split(table, "\n") {
		if !strings.HasPrefix(line, "| ") {
			break
		}
		cells := strings.Split(line, "|")
		if len(cells) < 5 {
			t.Fatalf("README.md: a row of fewer than 3 cells: %s", line)
		}
		for _, name := range strings.Split(strings.TrimSpace(cells[1]), ", ") {
			if _, dup := readme[name]; dup {
				t.Errorf("README.md: %s twice", name)
			}
			readme[name] = strings.TrimSpace(cells[2])
		}
	}
	for _, r := range settings.Table {
		if r.ReadBy&settings.Serve == 0 {
			continue
		}
		def, ok := readme[r.Name]
		delete(readme, r.Name)
		want := r.Default
		if d, ok := readmeDefaults[r.Name]; ok {
			want = d
		}
		if !ok {
			t.Errorf("README.md: no row of %s (default %q: %s)", r.Name, want, r.Help)
		} else if def != want {
			t.Errorf("README.md: %s's default is %q, the registry's %q", r.Name, def, want)
		}
	}
	for name := range readme {
		t.Errorf("README.md: a row of %s, which the registry does not mark for kiln serve", name)
	}
}
