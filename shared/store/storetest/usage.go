package storetest

import (
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// at parses an RFC 3339 test time.
func at(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v.UTC()
}

// runningBuild stores a build of set that has run since started.
func runningBuild(t *testing.T, s store.Store, set *kiln.BuildSetting, platform kiln.Platform, started time.Time) *kiln.Build {
	t.Helper()
	b := newBuild(set, kiln.StatusPending)
	b.Platform, b.CreatedAt = platform, started.Add(-time.Hour) // an hour in the queue: never counted
	wantOK(t, s.CreateBuild(t.Context(), b), "CreateBuild")
	wantOK(t, b.Transition(kiln.StatusRunning, started, ""), "Transition to running")
	wantOK(t, s.UpdateBuild(t.Context(), b, kiln.StatusPending, kiln.AllBuildFields), "UpdateBuild pending→running")
	return b
}

func wantUsage(t *testing.T, s store.Store, orgID, month string, minutes map[kiln.Platform]int64, skipped map[kiln.Trigger]int64) {
	t.Helper()
	u, err := s.GetUsage(t.Context(), orgID, month)
	wantOK(t, err, "GetUsage "+month)
	if minutes == nil {
		minutes = map[kiln.Platform]int64{}
	}
	if skipped == nil {
		skipped = map[kiln.Trigger]int64{}
	}
	wantEqual(t, "usage of "+month, u, &kiln.Usage{Month: month, Minutes: minutes, Skipped: skipped})
}

func testUsage(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("BuildMinutesCountedInTheMonthTheBuildEnded", func(t *testing.T) {
		cases := []struct {
			name             string
			started, ended   string
			platform         kiln.Platform
			to               kiln.BuildStatus
			month            string
			want             int64
			otherMonthsEmpty []string
		}{
			{"30 s round up to a minute", "2026-03-10T10:00:00Z", "2026-03-10T10:00:30Z", kiln.PlatformLinux, kiln.StatusComplete, "2026-03", 1, nil},
			{"exactly two minutes", "2026-03-10T10:00:00Z", "2026-03-10T10:02:00Z", kiln.PlatformWin64, kiln.StatusFailed, "2026-03", 2, nil},
			{"across midnight UTC into a new month: the month it ended", "2026-03-31T23:58:30Z", "2026-04-01T00:01:00Z", kiln.PlatformLinux, kiln.StatusComplete, "2026-04", 3, []string{"2026-03"}},
			{"the last second of a month stays in it", "2026-05-31T23:00:00Z", "2026-05-31T23:59:59Z", kiln.PlatformAndroid, kiln.StatusSuperseded, "2026-05", 60, []string{"2026-06"}},
			{"across a year", "2026-12-31T23:59:00Z", "2027-01-01T00:00:01Z", kiln.PlatformMac, kiln.StatusComplete, "2027-01", 2, []string{"2026-12"}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				s, ctx := open(t), t.Context()
				f, set := createOrganizationSetting(t, s)
				b := runningBuild(t, s, set, c.platform, at(t, c.started))
				// A heartbeat keeps the status: nothing counted yet.
				b.HeartbeatAt = ptr(at(t, c.started).Add(time.Second))
				wantOK(t, s.UpdateBuild(ctx, b, kiln.StatusRunning, kiln.AllBuildFields), "UpdateBuild heartbeat")
				wantUsage(t, s, f.org.ID, c.month, nil, nil)

				wantOK(t, b.Transition(c.to, at(t, c.ended), "x"), "Transition")
				if b.BuildMinutes != c.want {
					t.Fatalf("BuildMinutes = %d, want %d", b.BuildMinutes, c.want)
				}
				wantOK(t, s.UpdateBuild(ctx, b, kiln.StatusRunning, kiln.AllBuildFields), "UpdateBuild ending the build")
				got, err := s.GetBuild(ctx, f.org.ID, b.ID)
				wantOK(t, err, "GetBuild")
				wantEqual(t, "ended build", got, b)
				wantUsage(t, s, f.org.ID, c.month, map[kiln.Platform]int64{c.platform: c.want}, nil)
				for _, m := range c.otherMonthsEmpty {
					wantUsage(t, s, f.org.ID, m, nil, nil)
				}
				// The same end written again (a retried Lambda) is refused and counts nothing more.
				wantCode(t, s.UpdateBuild(ctx, b, kiln.StatusRunning, kiln.AllBuildFields), kiln.EInvalidState, "UpdateBuild ending it again")
				// Later writes that keep the ended status (auto deploy progress) count nothing.
				if c.to == kiln.StatusComplete {
					b.AutoDeployAttempts = 1
					wantOK(t, s.UpdateBuild(ctx, b, kiln.StatusComplete, kiln.AllBuildFields), "UpdateBuild complete→complete")
				}
				wantUsage(t, s, f.org.ID, c.month, map[kiln.Platform]int64{c.platform: c.want}, nil)
			})
		}
	})

	t.Run("MinutesAddUpByPlatformAndOrganization", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f, other := createOrganization(t, s), createOrganization(t, s)
		set := createSetting(t, s, createProject(t, s, f.org.ID, kiln.SourceGitHub))
		otherSet := createSetting(t, s, createProject(t, s, other.org.ID, kiln.SourceGitHub))
		start := at(t, "2026-07-01T08:00:00Z")
		for i, run := range []struct {
			set      *kiln.BuildSetting
			platform kiln.Platform
			d        time.Duration
		}{{set, kiln.PlatformLinux, 90 * time.Second}, {set, kiln.PlatformLinux, 10 * time.Minute}, {set, kiln.PlatformWin64, time.Second}, {otherSet, kiln.PlatformLinux, time.Hour}} {
			b := runningBuild(t, s, run.set, run.platform, start.Add(time.Duration(i)*time.Hour))
			wantOK(t, b.Transition(kiln.StatusComplete, start.Add(time.Duration(i)*time.Hour+run.d), ""), "Transition")
			wantOK(t, s.UpdateBuild(ctx, b, kiln.StatusRunning, kiln.AllBuildFields), "UpdateBuild")
		}
		// A pending build that is superseded never ran: nothing counted.
		p := createBuild(t, s, set, kiln.StatusPending)
		wantOK(t, p.Transition(kiln.StatusSuperseded, start, ""), "Transition")
		wantOK(t, s.UpdateBuild(ctx, p, kiln.StatusPending, kiln.AllBuildFields), "UpdateBuild pending→superseded")
		wantUsage(t, s, f.org.ID, "2026-07", map[kiln.Platform]int64{kiln.PlatformLinux: 12, kiln.PlatformWin64: 1}, nil)
		wantUsage(t, s, other.org.ID, "2026-07", map[kiln.Platform]int64{kiln.PlatformLinux: 60}, nil)
	})

	t.Run("ConcurrentEndsCountOnce", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f, set := createOrganizationSetting(t, s)
		b := runningBuild(t, s, set, kiln.PlatformLinux, at(t, "2026-08-01T08:00:00Z"))
		ends := make([]kiln.Build, 6)
		for i := range ends {
			ends[i] = *b
			to := []kiln.BuildStatus{kiln.StatusComplete, kiln.StatusFailed, kiln.StatusSuperseded}[i%3]
			wantOK(t, ends[i].Transition(to, at(t, "2026-08-01T08:04:10Z"), "x"), "Transition")
		}
		wantOneWinner(t, race(len(ends), func(i int) error {
			return s.UpdateBuild(ctx, &ends[i], kiln.StatusRunning, kiln.AllBuildFields)
		}), kiln.EInvalidState)
		wantUsage(t, s, f.org.ID, "2026-08", map[kiln.Platform]int64{kiln.PlatformLinux: 5}, nil)
	})

	t.Run("SkippedTriggersCountOncePerKey", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f, other := createOrganization(t, s), createOrganization(t, s)
		wantOK(t, s.RecordSkippedTrigger(ctx, f.org.ID, "2026-09", kiln.TriggerPush, "push:a"), "RecordSkippedTrigger")
		wantCode(t, s.RecordSkippedTrigger(ctx, f.org.ID, "2026-09", kiln.TriggerPush, "push:a"), kiln.EConflict, "RecordSkippedTrigger again")
		wantOK(t, s.RecordSkippedTrigger(ctx, f.org.ID, "2026-09", kiln.TriggerPush, "push:b"), "RecordSkippedTrigger")
		wantOK(t, s.RecordSkippedTrigger(ctx, f.org.ID, "2026-09", kiln.TriggerScheduled, "cron:1"), "RecordSkippedTrigger")
		wantOK(t, s.RecordSkippedTrigger(ctx, f.org.ID, "2026-10", kiln.TriggerScheduled, "cron:2"), "RecordSkippedTrigger")
		// Another organization may use the same key.
		wantOK(t, s.RecordSkippedTrigger(ctx, other.org.ID, "2026-09", kiln.TriggerPush, "push:a"), "RecordSkippedTrigger of another organization")
		wantUsage(t, s, f.org.ID, "2026-09", nil, map[kiln.Trigger]int64{kiln.TriggerPush: 2, kiln.TriggerScheduled: 1})
		wantUsage(t, s, f.org.ID, "2026-10", nil, map[kiln.Trigger]int64{kiln.TriggerScheduled: 1})
		wantUsage(t, s, other.org.ID, "2026-09", nil, map[kiln.Trigger]int64{kiln.TriggerPush: 1})
	})

	t.Run("ArtifactBytes", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f, other := createOrganization(t, s), createOrganization(t, s)
		n, err := s.ArtifactBytes(ctx, f.org.ID)
		wantOK(t, err, "ArtifactBytes")
		wantEqual(t, "bytes of no artifacts", n, int64(0))
		set := createSetting(t, s, createProject(t, s, f.org.ID, kiln.SourceGitHub))
		var want int64
		for i := range 3 {
			a := newArtifact(createBuild(t, s, set, kiln.StatusComplete))
			a.SizeBytes = int64(i+1) << 32 // beyond 32 bits
			want += a.SizeBytes
			wantOK(t, s.CreateArtifact(ctx, a), "CreateArtifact")
		}
		oa := newArtifact(createBuild(t, s, createSetting(t, s, createProject(t, s, other.org.ID, kiln.SourceGitHub)), kiln.StatusComplete))
		wantOK(t, s.CreateArtifact(ctx, oa), "CreateArtifact of another organization")
		n, err = s.ArtifactBytes(ctx, f.org.ID)
		wantOK(t, err, "ArtifactBytes")
		wantEqual(t, "artifact bytes", n, want)
	})

	t.Run("EnterpriseConcurrencyIsKept", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := newOrganization()
		f.org.Plan, f.org.MaxConcurrentBuilds = kiln.PlanEnterprise, 7
		wantOK(t, s.CreateOrganization(ctx, f.org, f.owner, f.token), "CreateOrganization")
		got, err := s.GetOrganization(ctx, f.org.ID)
		wantOK(t, err, "GetOrganization")
		wantEqual(t, "organization", got, f.org)
		f.org.MaxConcurrentBuilds, f.org.Plan = 0, kiln.PlanPro
		wantOK(t, s.UpdateOrganization(ctx, f.org), "UpdateOrganization")
		got, err = s.GetOrganization(ctx, f.org.ID)
		wantOK(t, err, "GetOrganization")
		wantEqual(t, "organization after the update", got, f.org)
	})
}
