package e2e

import (
	"testing"
	"time"
)

// poolSetting makes a Win64 setting of project for pool (with token) and returns its id.
func PoolSetting(t *testing.T, w *World, token, project, pool, buildType string) string {
	t.Helper()
	r := w.Do(t, "POST", "/projects/"+project+"/build-settings", token, map[string]any{
		"platform": "Win64", "buildType": buildType, "ueVersion": "5.3", "trigger": "manual", "branch": "main", "agentPool": pool})
	if r.Status != 201 {
		t.Fatalf("create setting: %d %s", r.Status, r.Raw)
	}
	return Field(t, r.Body, "id")
}

func TriggerAs(t *testing.T, w *World, token, project, setting string) string {
	t.Helper()
	r := w.Do(t, "POST", "/projects/"+project+"/build-settings/"+setting+"/trigger", token, "")
	if r.Status != 202 {
		t.Fatalf("trigger: %d %s", r.Status, r.Raw)
	}
	return Field(t, r.Body, "buildId")
}

func WaitAs(t *testing.T, w *World, token, id string, cond func(map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		r := w.Do(t, "GET", "/builds/"+id, token, nil)
		if r.Status == 200 && cond(r.Body) {
			return r.Body
		}
		if time.Now().After(deadline) {
			t.Fatalf("build %s: %d %s", id, r.Status, r.Raw)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func Ended(b map[string]any) bool {
	return b["status"] == "complete" || b["status"] == "failed" || b["status"] == "superseded"
}
