package limits

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
	"github.com/kilnbuild/kiln/shared/compose/serve"
)

func TestBuildLogIsCappedAndTheBuildCompletes(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.Serve, func(c *serve.Config) { c.LogMaxLines = 5 })
	pid := w.AddShooter(t)
	sid := w.AddSetting(t, pid, nil)["id"].(string)
	id := w.Trigger(t, pid, sid, "")
	b := w.WaitEnded(t, id)
	if b["status"] != "complete" {
		t.Fatalf("build ended %v: %v", b["status"], b["failureReason"])
	}
	lines := strings.Split(strings.TrimSuffix(w.LogText(t, id), "\n"), "\n")
	want := "kiln: log truncated after 5 lines; the rest of this build's output is dropped"
	if len(lines) != 6 || lines[5] != want {
		t.Fatalf("log of %d lines, want 5 and the marker:\n%s", len(lines), strings.Join(lines, "\n"))
	}
}

func TestArtifactLargerThanTheLimitFailsTheBuild(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.Serve, func(c *serve.Config) { c.ArtifactMax = 1024 })
	pid := w.AddShooter(t)
	sid := w.AddSetting(t, pid, nil)["id"].(string)
	id := w.Trigger(t, pid, sid, "")
	b := w.WaitEnded(t, id)
	if b["status"] != "failed" || b["failureReason"] != "the artifact is larger than the limit of 1 KiB (KILN_ARTIFACT_MAX)" {
		t.Fatalf("build ended %v: %v", b["status"], b["failureReason"])
	}
	if d := w.Do(t, "GET", "/builds/"+id+"/download", w.Token, nil); d.Status != 404 {
		t.Fatalf("download of a failed build: %d %s", d.Status, d.Raw)
	}
	// Nothing of the artifact is left on disk.
	var files []string
	filepath.WalkDir(filepath.Join(w.Config.Data, "artifacts"), func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, path)
		}
		return nil
	})
	if len(files) != 0 {
		t.Fatalf("artifact files left: %v", files)
	}
}
