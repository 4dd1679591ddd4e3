package serve

import (
	"io"
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
