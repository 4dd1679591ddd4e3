package e2e

import (
	"testing"
)

// wantCompleteStages checks a complete build's stages: sync first, upload last, all ended; and no
// current stage nor progress.
func WantCompleteStages(t *testing.T, b map[string]any) {
	t.Helper()
	stages, _ := b["stages"].([]any)
	var names []string
	for _, s := range stages {
		st := s.(map[string]any)
		names = append(names, st["name"].(string))
		if st["endedAt"] == nil {
			t.Errorf("stage %v of a complete build is not ended", st)
		}
	}
	if len(names) < 5 || names[0] != "sync" || names[len(names)-1] != "upload" || b["stage"] != nil || b["progress"] != nil {
		t.Fatalf("complete build: stages %v, stage %v, progress %v; want sync … upload, all ended, no stage nor progress", names, b["stage"], b["progress"])
	}
}
