package buildsteps

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestBuildJail(t *testing.T) {
	root := t.TempDir()
	real := filepath.Join(root, "UE_5.3")
	runUAT := filepath.Join(real, "Engine", "Build", "BatchFiles", "RunUAT.sh")
	linked := filepath.Join(root, "engines", "5.3")
	ws, archive, scratch := filepath.Join(root, "ws"), filepath.Join(root, "archive"), filepath.Join(root, "scratch")
	for _, d := range []string{filepath.Dir(runUAT), filepath.Dir(linked), filepath.Join(ws, ".git"), archive} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(real, linked); err != nil {
		t.Fatal(err)
	}
	j, cleanup, err := buildJail(filepath.Join(linked, "Engine", "Build", "BatchFiles", "RunUAT.sh"), ws, ws, archive, scratch)
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	if !slices.Equal(j.ReadOnly, []string{linked, real}) {
		t.Errorf("read-only %v, want the engine at its linked and its real path", j.ReadOnly)
	}
	if !slices.Equal(j.Writable, []string{ws, archive, scratch}) || !slices.Equal(j.Protected, []string{filepath.Join(ws, ".git")}) {
		t.Errorf("writable %v, protected %v", j.Writable, j.Protected)
	}
	if j.Home != filepath.Join(scratch, "home") || j.Tmp != filepath.Join(scratch, "tmp") || j.Dir != ws {
		t.Errorf("home %q tmp %q dir %q", j.Home, j.Tmp, j.Dir)
	}
	env := strings.Join(j.Env, " ")
	if !strings.Contains(env, "uebp_LogFolder="+scratch) || !strings.Contains(env, "UE-LocalDataCachePath="+filepath.Join(ws, "DerivedDataCache")) {
		t.Errorf("env %v: the engine's logs and cache must point at writable directories", j.Env)
	}
	if got := EngineRoot("/opt/odd/RunUAT.sh"); got != "/opt/odd" {
		t.Errorf("EngineRoot of an odd layout: %q", got)
	}
}
