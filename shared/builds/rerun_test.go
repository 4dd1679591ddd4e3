package builds

import (
	"context"

	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/accounts"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// rerunWorld is a lifecycle world with a GitHub and a Perforce project, a setting of each, and
// a service over them.
type rerunWorld struct {
	*lifecycleWorld
	svc        *Service
	gh, p4     *kiln.Project
	ghSet, p4S *kiln.BuildSetting
}

func newRerunWorld(t *testing.T) *rerunWorld {
	t.Helper()
	ctx := context.Background()
	w := &rerunWorld{lifecycleWorld: newLifecycleWorld(t)}
	created, err := accounts.CreateOrganization(ctx, w.st, accounts.NewOrganization{Name: "Studio", OwnerEmail: "o@studio.example", OwnerName: "O", Plan: kiln.PlanEnterprise}, w.now)
	if err != nil {
		t.Fatal(err)
	}
	w.org = created.Organization.ID
	w.svc = &Service{Store: w.st, Lifecycle: w.lc, Workflow: noWorkflow{}, Now: func() time.Time { return w.now }, Logger: w.lc.Logger}
	w.gh = &kiln.Project{ID: kiln.NewID(), OrganizationID: w.org, Name: "Game", SourceControl: kiln.SourceGitHub, RepoLink: "studio/game",
		InstallationID: "1", DefaultBranch: "main", UprojectPath: "Game.uproject", CreatedAt: w.now, UpdatedAt: w.now}
	w.p4 = &kiln.Project{ID: kiln.NewID(), OrganizationID: w.org, Name: "Depot game", SourceControl: kiln.SourcePerforce,
		Depot: "//game", StreamPath: "//game/main", UprojectPath: "Game.uproject", CreatedAt: w.now, UpdatedAt: w.now}
	w.ghSet = &kiln.BuildSetting{ID: kiln.NewID(), OrganizationID: w.org, ProjectID: w.gh.ID, Platform: kiln.PlatformLinux,
		BuildType: kiln.BuildTypeShipping, UEVersion: "5.3", Trigger: kiln.TriggerManual, Branch: "main", CreatedAt: w.now, UpdatedAt: w.now}
	w.p4S = &kiln.BuildSetting{ID: kiln.NewID(), OrganizationID: w.org, ProjectID: w.p4.ID, Platform: kiln.PlatformWin64,
		BuildType: kiln.BuildTypeDevelopment, UEVersion: "5.3", Trigger: kiln.TriggerManual, StreamPath: "//game/main", CreatedAt: w.now, UpdatedAt: w.now}
	for _, p := range []*kiln.Project{w.gh, w.p4} {
		if err := w.st.CreateProject(ctx, p, 0); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range []*kiln.BuildSetting{w.ghSet, w.p4S} {
		if err := w.st.CreateBuildSetting(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// original stores an ended build of a setting as change says.
func (w *rerunWorld) original(t *testing.T, pr *kiln.Project, st *kiln.BuildSetting, change func(b *kiln.Build)) *kiln.Build {
	t.Helper()
	b := &kiln.Build{ID: kiln.NewID(), OrganizationID: w.org, ProjectID: pr.ID, BuildSettingID: st.ID, Status: kiln.StatusFailed,
		Platform: st.Platform, BuildType: st.BuildType, Branch: st.Branch, UEVersion: st.UEVersion, TriggeredBy: "push:abc1234",
		FailureReason: "exit code 6", CreatedAt: w.now.Add(-time.Hour)}
	change(b)
	if err := w.st.CreateBuild(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRerun: a re-run is a new pending build of the same setting, branch and commit or
// changelist, triggered by the caller and linked to the original; a build of a deleted setting
// or of another organization is refused and creates nothing.
func TestRerun(t *testing.T) {
	const sha = "0123456789abcdef0123456789abcdef01234567"
	tests := []struct {
		name     string
		original func(w *rerunWorld, t *testing.T) *kiln.Build
		org      func(w *rerunWorld) string // the caller's organization; nil: the build's
		wantCode string
		want     func(orig *kiln.Build) kiln.Build // the fields checked of the new build
	}{
		{
			name: "GitHub build at a resolved commit",
			original: func(w *rerunWorld, t *testing.T) *kiln.Build {
				return w.original(t, w.gh, w.ghSet, func(b *kiln.Build) { b.Branch, b.Commit, b.CommitMessage = "feature/x", sha, "Fix" })
			},
			want: func(o *kiln.Build) kiln.Build { return kiln.Build{Branch: "feature/x", Commit: sha} },
		},
		{
			name: "GitHub build that failed before checkout builds the branch head",
			original: func(w *rerunWorld, t *testing.T) *kiln.Build {
				return w.original(t, w.gh, w.ghSet, func(b *kiln.Build) { b.Branch, b.FailureReason = "release", "could not start" })
			},
			want: func(o *kiln.Build) kiln.Build { return kiln.Build{Branch: "release"} },
		},
		{
			name: "Perforce build at a changelist",
			original: func(w *rerunWorld, t *testing.T) *kiln.Build {
				return w.original(t, w.p4, w.p4S, func(b *kiln.Build) { b.Branch, b.Commit, b.Changelist = "//game/dev", "4711", "4711" })
			},
			want: func(o *kiln.Build) kiln.Build {
				return kiln.Build{Branch: "//game/dev", Commit: "4711", Changelist: "4711"}
			},
		},
		{
			name: "clean build is re-run clean",
			original: func(w *rerunWorld, t *testing.T) *kiln.Build {
				return w.original(t, w.gh, w.ghSet, func(b *kiln.Build) { b.Commit, b.Clean = sha, true })
			},
			want: func(o *kiln.Build) kiln.Build { return kiln.Build{Branch: "main", Commit: sha, Clean: true} },
		},
		{
			name: "build of another organization",
			original: func(w *rerunWorld, t *testing.T) *kiln.Build {
				return w.original(t, w.gh, w.ghSet, func(b *kiln.Build) { b.Commit = sha })
			},
			org:      func(w *rerunWorld) string { return kiln.NewID() },
			wantCode: kiln.ENotFound,
		},
		{
			name: "build of a deleted setting",
			original: func(w *rerunWorld, t *testing.T) *kiln.Build {
				b := w.original(t, w.gh, w.ghSet, func(b *kiln.Build) { b.Commit = sha })
				if err := w.st.DeleteBuildSetting(context.Background(), w.org, w.gh.ID, w.ghSet.ID); err != nil {
					t.Fatal(err)
				}
				return b
			},
			wantCode: kiln.EInvalidState,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			w := newRerunWorld(t)
			orig := tt.original(w, t)
			org := w.org
			if tt.org != nil {
				org = tt.org(w)
			}
			got, created, err := w.svc.Rerun(ctx, RerunRequest{OrganizationID: org, BuildID: orig.ID, TriggeredBy: "user:u1"})
			if tt.wantCode != "" {
				if !kiln.IsCode(err, tt.wantCode) {
					t.Fatalf("Rerun: %v, want %s", err, tt.wantCode)
				}
				if list, _, _ := w.st.ListBuilds(ctx, w.org, store.BuildFilter{}, store.Page{Limit: store.MaxLimit}); len(list) != 1 {
					t.Fatalf("builds after a refused re-run: %d, want the original only", len(list))
				}
				return
			}
			if err != nil || !created {
				t.Fatalf("Rerun: created %v, %v", created, err)
			}
			stored := w.status(t, got.ID)
			want := tt.want(orig)
			if stored.ID == orig.ID || stored.RerunOf != orig.ID || stored.TriggeredBy != "user:u1" || stored.Status != kiln.StatusPending ||
				stored.BuildSettingID != orig.BuildSettingID || stored.ProjectID != orig.ProjectID ||
				stored.Branch != want.Branch || stored.Commit != want.Commit || stored.Changelist != want.Changelist || stored.Clean != want.Clean {
				t.Errorf("re-run stored as %+v\nwant branch %q commit %q changelist %q clean %v, rerunOf %s, by user:u1, pending",
					stored, want.Branch, want.Commit, want.Changelist, want.Clean, orig.ID)
			}
		})
	}
}

// TestRerunGoesTheWayOfTrigger: a re-run supersedes an earlier pending build of its branch, and
// its Idempotency-Key gives the same build when repeated but is refused for another request.
func TestRerunGoesTheWayOfTrigger(t *testing.T) {
	ctx := context.Background()
	w := newRerunWorld(t)
	orig := w.original(t, w.gh, w.ghSet, func(b *kiln.Build) { b.Status, b.FailureReason, b.Commit = kiln.StatusPending, "", "abc1234" })
	req := RerunRequest{OrganizationID: w.org, BuildID: orig.ID, TriggeredBy: "user:u1", ClientKey: ClientKey{UserID: "u1", Key: "k1"}}
	first, created, err := w.svc.Rerun(ctx, req)
	if err != nil || !created {
		t.Fatalf("Rerun: created %v, %v", created, err)
	}
	if got := w.status(t, orig.ID).Status; got != kiln.StatusSuperseded {
		t.Errorf("original pending build is %s after its re-run, want superseded", got)
	}
	again, created, err := w.svc.Rerun(ctx, req)
	if err != nil || created || again.ID != first.ID {
		t.Errorf("repeated re-run: %v created %v %v, want build %s again", again, created, err, first.ID)
	}
	_, _, err = w.svc.Trigger(ctx, TriggerRequest{Project: w.gh, Setting: w.ghSet, TriggeredBy: "user:u1", ClientKey: req.ClientKey})
	if !kiln.IsCode(err, kiln.EIdempotencyKeyReused) {
		t.Errorf("a trigger under the re-run's key: %v, want idempotency_key_reused", err)
	}
}
