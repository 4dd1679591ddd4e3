package codebuild

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestParameterStoreVariables: a PARAMETER_STORE variable reaches the build's command with the
// parameter's value while the build, as BatchGetBuilds answers it, keeps the name; a resolver
// refusing (the role may not read it) or a missing parameter fails the build before its
// command runs, the log saying why, as CodeBuild's DOWNLOAD_SOURCE phase does.
func TestParameterStoreVariables(t *testing.T) {
	resolve := func(_ context.Context, names []string) (map[string]string, error) {
		if names[0] == "/denied" {
			return nil, errors.New("AccessDeniedException: not authorized to perform: ssm:GetParameters")
		}
		out := map[string]string{}
		for _, n := range names {
			if n == "/p/secret" {
				out[n] = "the-value"
			}
		}
		return out, nil
	}
	for _, tt := range []struct {
		name, param, wantStatus, wantLog string
		resolver                         bool
	}{
		{"Resolved", "/p/secret", StatusSucceeded, "SECRET=the-value", true},
		{"Denied", "/denied", StatusFailed, "AccessDeniedException", true},
		{"Missing", "/p/none", StatusFailed, "parameter does not exist: /p/none", true},
		{"NoResolver", "/p/secret", StatusFailed, "no parameter store", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := Config{Project: "p", Command: []string{"sh", "-c", `echo "SECRET=$SECRET"`}, Dir: dir}
			if tt.resolver {
				cfg.Parameters = resolve
			}
			s, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			started, err := s.start(startBuildInput{ProjectName: "p", EnvironmentVariablesOverride: []EnvironmentVariable{
				{Name: "SECRET", Value: tt.param, Type: "PARAMETER_STORE"}, {Name: "PLAIN", Value: "x", Type: "PLAINTEXT"}}})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			b, err := s.Wait(ctx, started.ID)
			if err != nil {
				t.Fatal(err)
			}
			log, _ := os.ReadFile(filepath.Join(dir, strings.TrimPrefix(b.ID, "p:")+".log"))
			if b.BuildStatus != tt.wantStatus || !strings.Contains(string(log), tt.wantLog) {
				t.Fatalf("build %s, log %q; want %s with %q", b.BuildStatus, log, tt.wantStatus, tt.wantLog)
			}
			if v := b.Environment.EnvironmentVariables[0]; v.Value != tt.param {
				t.Errorf("BatchGetBuilds answers the variable as %+v, want the parameter's name", v)
			}
		})
	}
}
