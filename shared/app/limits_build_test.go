package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBuildLogIsCappedAndTheBuildCompletes(t *testing.T) {
	w := newWorld(t, func(c *Config) { c.LogMaxLines = 5 })
	pid := w.addShooter(t)
	sid := w.addSetting(t, pid, nil)["id"].(string)
	id := w.trigger(t, pid, sid, "")
	b := w.waitEnded(t, id)
	if b["status"] != "complete" {
		t.Fatalf("build ended %v: %v", b["status"], b["failureReason"])
	}
	lines := strings.Split(strings.TrimSuffix(w.logText(t, id), "\n"), "\n")
	want := "kiln: log truncated after 5 lines; the rest of this build's output is dropped"
	if len(lines) != 6 || lines[5] != want {
		t.Fatalf("log of %d lines, want 5 and the marker:\n%s", len(lines), strings.Join(lines, "\n"))
	}
}

func TestArtifactLargerThanTheLimitFailsTheBuild(t *testing.T) {
	w := newWorld(t, func(c *Config) { c.ArtifactMax = 1024 })
	pid := w.addShooter(t)
	sid := w.addSetting(t, pid, nil)["id"].(string)
	id := w.trigger(t, pid, sid, "")
	b := w.waitEnded(t, id)
	if b["status"] != "failed" || b["failureReason"] != "the artifact is larger than the limit of 1 KiB (KILN_ARTIFACT_MAX)" {
		t.Fatalf("build ended %v: %v", b["status"], b["failureReason"])
	}
	if d := w.do(t, "GET", "/builds/"+id+"/download", w.token, nil); d.Status != 404 {
		t.Fatalf("download of a failed build: %d %s", d.Status, d.Raw)
	}
	// Nothing of the artifact is left on disk.
	var files []string
	filepath.WalkDir(filepath.Join(w.cfg.Data, "artifacts"), func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, path)
		}
		return nil
	})
	if len(files) != 0 {
		t.Fatalf("artifact files left: %v", files)
	}
}
