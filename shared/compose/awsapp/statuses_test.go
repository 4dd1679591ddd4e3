package awsapp

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/kilnbuild/kiln/shared/accounts"
	"github.com/kilnbuild/kiln/shared/github/githubtest"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// TestFunctionsThatEndBuildsPostTheFinalCommitStatus: a build the API never hears the end of
// (its host was lost, its execution aborted, its host went silent) is ended by the task, ended or
// schedule function, and the commit it built gets its failure status from that function, instead
// of staying "pending" on GitHub for ever.
func TestFunctionsThatEndBuildsPostTheFinalCommitStatus(t *testing.T) {
	tests := map[string]struct {
		end         func(t *testing.T, fns *Functions, sched *Schedule, raw func(string) []byte)
		description string
	}{
		"task: the host was lost": {func(t *testing.T, fns *Functions, _ *Schedule, raw func(string) []byte) {
			invoke(t, lambda.NewHandler(fns.Task.Handle), raw("task-finish-host-lost.json"))
		}, "Build #1 failed: host lost: its CodeBuild build ended FAILED"},
		"ended: the execution was aborted": {func(t *testing.T, fns *Functions, _ *Schedule, raw func(string) []byte) {
			invoke(t, lambda.NewHandler(fns.Ended.Handle), raw("ended-aborted.json"))
		}, "Build #1 failed: the build's workflow ended ABORTED before the build did"},
		"schedule: the host went silent": {func(t *testing.T, _ *Functions, sched *Schedule, _ func(string) []byte) {
			if err := sched.Tick(context.Background(), time.Now().UTC().Truncate(24*time.Hour)); err != nil {
				t.Fatal(err)
			}
		}, "Build #1 failed: the build host stopped reporting"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			gh := githubtest.New(t)
			gh.AddInstallation(42, "studio")
			gh.GrantStatuses(42)
			gh.AddRepo(42, "studio/shooter", true, "main")
			app := testGitHubApp(t, gh, "s")
			st, logs := testStoreAndLogs(t)
			now := time.Now().UTC().Truncate(time.Millisecond)
			created, err := accounts.CreateOrganization(ctx, st, accounts.NewOrganization{Name: "Studio", OwnerEmail: "a@studio.example", OwnerName: "A"}, now)
			if err != nil {
				t.Fatal(err)
			}
			org := created.Organization.ID
			p := &kiln.Project{ID: kiln.NewID(), OrganizationID: org, Name: "G", SourceControl: kiln.SourceGitHub, RepoLink: "studio/shooter",
				InstallationID: "42", DefaultBranch: "main", CreatedAt: now, UpdatedAt: now}
			silentSince := now.Add(-2 * kiln.HeartbeatTimeout)
			b := &kiln.Build{ID: kiln.NewID(), OrganizationID: org, ProjectID: p.ID, BuildSettingID: kiln.NewID(), Status: kiln.StatusRunning,
				Platform: kiln.PlatformLinux, BuildType: kiln.BuildTypeShipping, Branch: "main", Commit: strings.Repeat("ab", 20),
				UEVersion: "5.3", TriggeredBy: "manual", CreatedAt: silentSince, StartedAt: &silentSince, HeartbeatAt: &silentSince, Host: "codebuild"}
			for _, err := range []error{st.CreateProject(ctx, p, 0), st.CreateBuild(ctx, b)} {
				if err != nil {
					t.Fatal(err)
				}
			}

			logger := slog.New(slog.NewTextHandler(io.Discard, nil))
			cfg := AWSConfig{PublicURL: "https://kiln.example"}
			parts := Parts{Store: st, Logs: logs, Artifacts: noArtifacts{}, GitHub: app, Workflow: awsWorkflow{}, Logger: logger,
				Queue: &LocalQueue{Logger: logger}}
			fns, err := NewFunctionsFromParts(cfg, parts)
			if err != nil {
				t.Fatal(err)
			}
			sched, err := NewSchedule(BackgroundConfig{AWSConfig: cfg}, parts)
			if err != nil {
				t.Fatal(err)
			}
			raw := func(name string) []byte {
				data, err := os.ReadFile(filepath.Join("../../../events", name))
				if err != nil {
					t.Fatal(err)
				}
				data = bytes.ReplaceAll(data, []byte("ORGANIZATIONIDREPLACEDBYTEST"), []byte(org))
				return bytes.ReplaceAll(data, []byte("BUILDIDREPLACEDBYTEST"), []byte(b.ID))
			}

			tt.end(t, fns, sched, raw)

			got, err := st.GetBuild(ctx, org, b.ID)
			if err != nil || got.Status != kiln.StatusFailed {
				t.Fatalf("the build is %v (%v), want failed", got, err)
			}
			statuses := gh.Statuses()
			if len(statuses) != 1 {
				t.Fatalf("GitHub got %d statuses, want the failure: %+v", len(statuses), statuses)
			}
			s := statuses[0]
			if s.State != "failure" || s.SHA != b.Commit || s.Repo != "studio/shooter" || !strings.HasPrefix(s.Description, tt.description) ||
				s.TargetURL != "https://kiln.example/console/builds/"+b.ID {
				t.Errorf("status %+v, want failure %q on %s", s, tt.description, b.Commit)
			}
		})
	}
}

func invoke(t *testing.T, h lambda.Handler, raw []byte) {
	t.Helper()
	if _, err := h.Invoke(context.Background(), raw); err != nil {
		t.Fatal(err)
	}
}
