package storetest

import (
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// testPartialUpdates: writers that read a build and change different fields of it, each
// writing only what it changed (kiln.ChangedBuildFields), do not undo each other, whatever the
// order of their reads and writes: a host's heartbeat and the API's or the workflow's writes
// come from different processes.
func testPartialUpdates(t *testing.T, open func(t *testing.T) store.Store) {
	// update applies edit to a copy of read and writes what it changed.
	update := func(t *testing.T, s store.Store, read *kiln.Build, edit func(b *kiln.Build)) *kiln.Build {
		t.Helper()
		b := *read
		edit(&b)
		wantOK(t, s.UpdateBuild(t.Context(), &b, read.Status, kiln.ChangedBuildFields(read, &b)), "UpdateBuild")
		return &b
	}
	running := func(t *testing.T, s store.Store) (*kiln.Build, *kiln.Build) {
		t.Helper()
		f := createOrganization(t, s)
		b := newBuild(createSetting(t, s, createProject(t, s, f.org.ID, kiln.SourceGitHub)), kiln.StatusRunning)
		b.StartedAt, b.HeartbeatAt, b.Host = ptr(b.CreatedAt), ptr(b.CreatedAt), "codebuild"
		wantOK(t, s.CreateBuild(t.Context(), b), "CreateBuild")
		first, err := s.GetBuild(t.Context(), b.OrganizationID, b.ID)
		wantOK(t, err, "GetBuild")
		second, err := s.GetBuild(t.Context(), b.OrganizationID, b.ID)
		wantOK(t, err, "GetBuild")
		return first, second
	}
	beat := now().Add(10 * time.Second)
	heartbeat := func(b *kiln.Build) { b.HeartbeatAt = ptr(beat) }
	token := func(b *kiln.Build) { b.TaskToken = "AQCEAAAAKgAAAAMAAAAAexample" }
	commit := func(b *kiln.Build) {
		b.Commit, b.CommitMessage = "fedcba9876543210fedcba9876543210fedcba98", "Synced"
	}
	warm := func(b *kiln.Build) { b.Cache, b.CacheFrom = kiln.CacheWarm, "b0123456789abcdef" }
	cold := func(b *kiln.Build) { b.Cache, b.CacheReason = kiln.CacheCold, kiln.CacheReasonNone }
	t0 := now()
	stages := func(b *kiln.Build) {
		b.EnterStage("sync", t0.Add(time.Second))
		b.EnterStage("compile", t0.Add(5*time.Second))
	}

	for _, tc := range []struct {
		name        string
		first, then func(b *kiln.Build)
	}{
		{"HeartbeatThenTaskToken", heartbeat, token},
		{"TaskTokenThenHeartbeat", token, heartbeat},
		{"HeartbeatThenCommit", heartbeat, commit},
		{"CommitThenHeartbeat", commit, heartbeat},
		{"WarmCacheThenHeartbeat", warm, heartbeat},
		{"CommitThenColdCache", commit, cold},
		{"StagesThenHeartbeat", stages, heartbeat},
		{"HeartbeatThenStages", heartbeat, stages},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			readA, readB := running(t, s)
			update(t, s, readA, tc.first)
			written := update(t, s, readB, tc.then) // from a read taken before the first write
			want := *readA
			tc.first(&want)
			tc.then(&want)
			got, err := s.GetBuild(t.Context(), want.OrganizationID, want.ID)
			wantOK(t, err, "GetBuild")
			wantEqual(t, "stored build", got, &want)
			wantEqual(t, "the second writer's build after its write", written, &want)
		})
	}

	t.Run("StagesEndWithTheBuild", func(t *testing.T) {
		s := open(t)
		read, _ := running(t, s)
		update(t, s, read, stages)
		got, err := s.GetBuild(t.Context(), read.OrganizationID, read.ID)
		wantOK(t, err, "GetBuild")
		end := t0.Add(9 * time.Second)
		ended := update(t, s, got, func(b *kiln.Build) {
			wantOK(t, b.Transition(kiln.StatusComplete, end, ""), "Transition")
		})
		got, err = s.GetBuild(t.Context(), read.OrganizationID, read.ID)
		wantOK(t, err, "GetBuild")
		wantEqual(t, "stored build", got, ended)
		want := []kiln.BuildStage{
			{Name: "sync", StartedAt: t0.Add(time.Second), EndedAt: ptr(t0.Add(5 * time.Second))},
			{Name: "compile", StartedAt: t0.Add(5 * time.Second), EndedAt: ptr(end)},
		}
		wantEqual(t, "stored stages", got.Stages, want)
	})

	t.Run("CleanIsKeptFromTheTrigger", func(t *testing.T) {
		s := open(t)
		f := createOrganization(t, s)
		b := newBuild(createSetting(t, s, createProject(t, s, f.org.ID, kiln.SourceGitHub)), kiln.StatusPending)
		b.Clean = true
		wantOK(t, s.CreateBuild(t.Context(), b), "CreateBuild")
		got, err := s.GetBuild(t.Context(), b.OrganizationID, b.ID)
		wantOK(t, err, "GetBuild")
		if !got.Clean {
			t.Fatal("a build created clean reads back not clean")
		}
		cold := *got
		cold.Cache, cold.CacheReason = kiln.CacheCold, kiln.CacheReasonClean
		wantOK(t, s.UpdateBuild(t.Context(), &cold, got.Status, kiln.ChangedBuildFields(got, &cold)), "UpdateBuild")
		got, err = s.GetBuild(t.Context(), b.OrganizationID, b.ID)
		wantOK(t, err, "GetBuild")
		wantEqual(t, "stored build", got, &cold)
	})

	t.Run("EndKeepsAConcurrentHeartbeat", func(t *testing.T) {
		s := open(t)
		readA, readB := running(t, s)
		update(t, s, readA, heartbeat)
		ended := update(t, s, readB, func(b *kiln.Build) {
			wantOK(t, b.Transition(kiln.StatusFailed, now(), "cancelled"), "Transition")
		})
		got, err := s.GetBuild(t.Context(), ended.OrganizationID, ended.ID)
		wantOK(t, err, "GetBuild")
		if got.Status != kiln.StatusFailed || got.HeartbeatAt == nil || !got.HeartbeatAt.Equal(beat) {
			t.Fatalf("stored build: status %s, heartbeat %v; want failed with the heartbeat at %v", got.Status, got.HeartbeatAt, beat)
		}
	})

	t.Run("StatusMovedOnRefusesTheWrite", func(t *testing.T) {
		s := open(t)
		readA, readB := running(t, s)
		update(t, s, readA, func(b *kiln.Build) {
			wantOK(t, b.Transition(kiln.StatusFailed, now(), "cancelled"), "Transition")
		})
		late := *readB
		heartbeat(&late)
		err := s.UpdateBuild(t.Context(), &late, readB.Status, kiln.ChangedBuildFields(readB, &late))
		wantCode(t, err, kiln.EInvalidState, "UpdateBuild from a status the build left")
		got, err := s.GetBuild(t.Context(), readA.OrganizationID, readA.ID)
		wantOK(t, err, "GetBuild")
		if !got.HeartbeatAt.Equal(*readA.HeartbeatAt) {
			t.Fatalf("a refused write changed the heartbeat to %v", got.HeartbeatAt)
		}
	})
}
