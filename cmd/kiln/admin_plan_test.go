package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestAdminPlan: bootstrap takes --plan (default enterprise), and kiln admin plan changes the
// plan and an enterprise organization's own concurrency; bad input is refused and changes
// nothing.
func TestAdminPlan(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	runJSON := func(args ...string) (map[string]any, error) {
		var out, errOut bytes.Buffer
		if err := run(ctx, append([]string{"admin"}, append(args, "--data", dir)...), noEnv, &out, &errOut); err != nil {
			return nil, err
		}
		var got map[string]any
		if err := json.Unmarshal(out.Bytes(), &got); err != nil {
			t.Fatalf("%v printed %q", args, out.String())
		}
		return got, nil
	}
	boot, err := runJSON("bootstrap", "--org", "Hosted", "--email", "a@hosted.example", "--name", "A", "--plan", "free")
	if err != nil {
		t.Fatal(err)
	}
	orgID := boot["organizationId"].(string)
	if _, err := runJSON("bootstrap", "--org", "Typo", "--email", "b@typo.example", "--name", "B", "--plan", "gold"); err == nil {
		t.Error("bootstrap --plan gold: accepted")
	}
	cases := []struct {
		args    []string
		want    map[string]any
		wantErr string
	}{
		{[]string{"--plan", "pro"}, map[string]any{"organizationId": orgID, "plan": "pro"}, ""},
		{[]string{"--plan", "enterprise", "--max-concurrent-builds", "3"}, map[string]any{"organizationId": orgID, "plan": "enterprise", "maxConcurrentBuilds": float64(3)}, ""},
		{[]string{"--plan", "enterprise"}, map[string]any{"organizationId": orgID, "plan": "enterprise", "maxConcurrentBuilds": float64(3)}, ""}, // kept
		{[]string{"--plan", "pro", "--max-concurrent-builds", "3"}, nil, "maxConcurrentBuilds"},
		{[]string{"--plan", "enterprise", "--max-concurrent-builds", "-1"}, nil, "maxConcurrentBuilds"},
		{[]string{"--plan", "enterprise", "--max-concurrent-builds", "x"}, nil, "not a whole number"},
		{[]string{"--plan", "platinum"}, nil, "plan"},
		{[]string{"--plan", "free"}, map[string]any{"organizationId": orgID, "plan": "free"}, ""},
	}
	for _, c := range cases {
		got, err := runJSON(append([]string{"plan", "--org-id", orgID}, c.args...)...)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("plan %v: %v %v, want an error about %s", c.args, got, err, c.wantErr)
			}
			continue
		}
		if err != nil || len(got) != len(c.want) {
			t.Fatalf("plan %v: %v %v, want %v", c.args, got, err, c.want)
		}
		for k, v := range c.want {
			if got[k] != v {
				t.Errorf("plan %v: %s = %v, want %v", c.args, k, got[k], v)
			}
		}
	}
	if _, err := runJSON("plan", "--org-id", "nope", "--plan", "pro"); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("plan of an unknown organization: %v", err)
	}
}
