package app

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLimitSettings(t *testing.T) {
	c, err := LoadConfig(nil, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.OrgMaxRunning != 0 || c.LogMaxLines != 200000 || c.ArtifactMax != 50<<30 {
		t.Fatalf("defaults: org max %d, log lines %d, artifact max %d", c.OrgMaxRunning, c.LogMaxLines, c.ArtifactMax)
	}
	env := map[string]string{"KILN_ORG_MAX_RUNNING": "2", "KILN_LOG_MAX_LINES": "1000", "KILN_ARTIFACT_MAX": "500MiB"}
	c, err = LoadConfig(nil, func(k string) string { return env[k] }, io.Discard)
	if err != nil || c.OrgMaxRunning != 2 || c.LogMaxLines != 1000 || c.ArtifactMax != 500<<20 {
		t.Fatalf("set: %v %d %d %d", err, c.OrgMaxRunning, c.LogMaxLines, c.ArtifactMax)
	}
	for env, v := range map[string]string{"KILN_ORG_MAX_RUNNING": "0", "KILN_LOG_MAX_LINES": "-1", "KILN_ARTIFACT_MAX": "50GB"} {
		_, err := LoadConfig(nil, func(k string) string {
			if k == env {
				return v
			}
			return ""
		}, io.Discard)
		if err == nil || !strings.Contains(err.Error(), env) {
			t.Errorf("%s=%s: %v", env, v, err)
		}
	}
}

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
