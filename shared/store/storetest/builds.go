package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// newBuild builds (without storing) a build of setting set with the given status.
func newBuild(set *kiln.BuildSetting, status kiln.BuildStatus) *kiln.Build {
	return &kiln.Build{
		ID:              kiln.NewID(),
		OrganizationID:  set.OrganizationID,
		ProjectID:       set.ProjectID,
		BuildSettingID:  set.ID,
		Status:          status,
		Platform:        set.Platform,
		BuildType:       set.BuildType,
		Branch:          set.Branch,
		Commit:          "0123456789abcdef0123456789abcdef01234567",
		UEVersion:       set.UEVersion,
		UEVersionSource: kiln.UEVersionFromSetting,
		TriggeredBy:     "cron",
		CreatedAt:       now(),
	}
}

// newPendingBuilds makes (without storing) n pending builds of set.
func newPendingBuilds(set *kiln.BuildSetting, n int) []*kiln.Build {
	builds := make([]*kiln.Build, n)
	for i := range builds {
		builds[i] = newBuild(set, kiln.StatusPending)
	}
	return builds
}

func createBuild(t *testing.T, s store.Store, set *kiln.BuildSetting, status kiln.BuildStatus) *kiln.Build {
	t.Helper()
	b := newBuild(set, status)
	wantOK(t, s.CreateBuild(t.Context(), b), "CreateBuild")
	return b
}

// listBuildIDs walks a whole filtered build list.
func listBuildIDs(t *testing.T, s store.Store, orgID string, f store.BuildFilter, limit int) []string {
	t.Helper()
	return walk(t, limit, func(p store.Page) ([]*kiln.Build, string, error) {
		return s.ListBuilds(t.Context(), orgID, f, p)
	}, buildID, nil)
}

func testBuilds(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("CreateAndGet", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		set := createSetting(t, s, createProject(t, s, f.org.ID, kiln.SourcePerforce))
		full := newBuild(set, kiln.StatusFailed)
		full.CommitMessage, full.Changelist = "Fix the \"thing\"\nsecond line", "12345"
		full.TriggeredBy, full.FailureReason = "user:"+f.owner.User.ID, "cancelled"
		full.AutoDeployStatus, full.AutoDeployError = kiln.AutoDeployFailed, "HTTP 500"
		full.AutoDeployAttempts = 3
		full.StartedAt, full.FinishedAt = ptr(full.CreatedAt.Add(time.Second)), ptr(full.CreatedAt.Add(time.Minute))
		full.HeartbeatAt = ptr(full.CreatedAt.Add(50 * time.Second))
		full.Host = "local/build-07.studio.example/worker-2"
		full.HostCredentialHash = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
		full.AgentPool = "win64-ue5.4"
		full.TaskToken = "AQCEAAAAKgAAAAMAAAAAAAAAAT4pYqf0example"
		full.RerunOf = kiln.NewID()
		for _, b := range []*kiln.Build{newBuild(set, kiln.StatusPending), full} {
			wantOK(t, s.CreateBuild(ctx, b), "CreateBuild")
			got, err := s.GetBuild(ctx, f.org.ID, b.ID)
			wantOK(t, err, "GetBuild")
			wantEqual(t, "build", got, b)
		}
		other := createOrganization(t, s)
		_, err := s.GetBuild(ctx, other.org.ID, full.ID)
		wantCode(t, err, kiln.ENotFound, "GetBuild of another organization")
		_, err = s.GetBuild(ctx, f.org.ID, kiln.NewID())
		wantCode(t, err, kiln.ENotFound, "GetBuild of an unknown id")
	})

	t.Run("ListFilters", func(t *testing.T) { testBuildFilters(t, open(t)) })

	t.Run("UpdateWithExpectedStatus", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f, set := createOrganizationSetting(t, s)
		b := createBuild(t, s, set, kiln.StatusPending)
		wantOK(t, b.Transition(kiln.StatusRunning, now(), ""), "Transition")
		b.Host = "local/build-07/worker-1" // the claim records who took it in the same write
		b.HostCredentialHash = "2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae"
		b.AgentPool = "linux.big_1"                             // written with the rest, though nothing changes it after the trigger
		b.TaskToken = "AQCEAAAAKgAAAAMAAAAAAAAAAT4pYqf0example" // the workflow's await task sets it
		wantOK(t, s.UpdateBuild(ctx, b, kiln.StatusPending, kiln.AllBuildFields), "UpdateBuild pending→running")
		got, err := s.GetBuild(ctx, f.org.ID, b.ID)
		wantOK(t, err, "GetBuild")
		wantEqual(t, "running build", got, b)
		wantIDs(t, "pending builds", listBuildIDs(t, s, f.org.ID, store.BuildFilter{Status: kiln.StatusPending}, 10), nil)
		wantIDs(t, "running builds", listBuildIDs(t, s, f.org.ID, store.BuildFilter{Status: kiln.StatusRunning}, 10), []string{b.ID})

		// A write from a copy read before the task token was stored keeps the token, and carries it.
		stale := *b
		stale.TaskToken = ""
		stale.HeartbeatAt = ptr(now())
		wantOK(t, s.UpdateBuild(ctx, &stale, kiln.StatusRunning, kiln.AllBuildFields), "UpdateBuild without the task token")
		if stale.TaskToken != b.TaskToken {
			t.Errorf("UpdateBuild without the task token: the build carries %q, want the stored %q", stale.TaskToken, b.TaskToken)
		}
		got, err = s.GetBuild(ctx, f.org.ID, b.ID)
		wantOK(t, err, "GetBuild")
		wantEqual(t, "build written without its task token", got, &stale)
		b = &stale

		// Heartbeats are updates that keep the status.
		for i := range 2 {
			b.HeartbeatAt = ptr(now().Add(time.Duration(i) * time.Second))
			wantOK(t, s.UpdateBuild(ctx, b, kiln.StatusRunning, kiln.AllBuildFields), "UpdateBuild running→running (heartbeat)")
			got, err = s.GetBuild(ctx, f.org.ID, b.ID)
			wantOK(t, err, "GetBuild")
			wantEqual(t, "build after a heartbeat", got, b)
		}

		wantOK(t, b.Transition(kiln.StatusComplete, now().Add(time.Minute), ""), "Transition")
		b.AutoDeployStatus, b.HeartbeatAt = kiln.AutoDeployPending, nil
		wantOK(t, s.UpdateBuild(ctx, b, kiln.StatusRunning, kiln.AllBuildFields), "UpdateBuild running→complete")
		got, err = s.GetBuild(ctx, f.org.ID, b.ID)
		wantOK(t, err, "GetBuild")
		wantEqual(t, "complete build awaiting delivery", got, b)
		// A complete build still takes updates that keep its status (auto deploy progress).
		b.AutoDeployStatus, b.AutoDeployAttempts = kiln.AutoDeployDelivering, 1
		wantOK(t, s.UpdateBuild(ctx, b, kiln.StatusComplete, kiln.AllBuildFields), "UpdateBuild complete→complete (delivering)")
		got, err = s.GetBuild(ctx, f.org.ID, b.ID)
		wantOK(t, err, "GetBuild")
		wantEqual(t, "build delivering", got, b)
		b.AutoDeployStatus, b.AutoDeployError, b.AutoDeployAttempts = kiln.AutoDeployFailed, "connection refused", 2
		wantOK(t, s.UpdateBuild(ctx, b, kiln.StatusComplete, kiln.AllBuildFields), "UpdateBuild complete→complete")
		got, err = s.GetBuild(ctx, f.org.ID, b.ID)
		wantOK(t, err, "GetBuild")
		wantEqual(t, "complete build", got, b)
		wantIDs(t, "running builds", listBuildIDs(t, s, f.org.ID, store.BuildFilter{Status: kiln.StatusRunning}, 10), nil)
		wantIDs(t, "complete builds", listBuildIDs(t, s, f.org.ID, store.BuildFilter{Status: kiln.StatusComplete}, 10), []string{b.ID})
	})

	t.Run("UpdateWithWrongStatusWritesNothing", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f, set := createOrganizationSetting(t, s)
		stored := createBuild(t, s, set, kiln.StatusRunning)
		for _, expected := range []kiln.BuildStatus{kiln.StatusPending, kiln.StatusComplete, kiln.StatusFailed, kiln.StatusSuperseded} {
			t.Run(string(expected), func(t *testing.T) {
				b := *stored
				b.Status, b.FinishedAt, b.FailureReason = kiln.StatusFailed, ptr(now()), "nope"
				b.Commit, b.AutoDeployStatus = "changed", kiln.AutoDeployDelivering
				wantCode(t, s.UpdateBuild(ctx, &b, expected, kiln.AllBuildFields), kiln.EInvalidState, "UpdateBuild with a wrong expected status")
				got, err := s.GetBuild(ctx, f.org.ID, stored.ID)
				wantOK(t, err, "GetBuild")
				wantEqual(t, "build after a refused update", got, stored)
				wantIDs(t, "failed builds", listBuildIDs(t, s, f.org.ID, store.BuildFilter{Status: kiln.StatusFailed}, 10), nil)
			})
		}
	})

	t.Run("UpdateOfAnotherOrganizationIsNotFound", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		other := createOrganization(t, s)
		set := createSetting(t, s, createProject(t, s, f.org.ID, kiln.SourceGitHub))
		stored := createBuild(t, s, set, kiln.StatusPending)
		b := *stored
		b.OrganizationID = other.org.ID
		wantOK(t, b.Transition(kiln.StatusRunning, now(), ""), "Transition")
		wantCode(t, s.UpdateBuild(ctx, &b, kiln.StatusPending, kiln.AllBuildFields), kiln.ENotFound, "UpdateBuild of another organization")
		unknown := newBuild(set, kiln.StatusPending)
		wantCode(t, s.UpdateBuild(ctx, unknown, kiln.StatusPending, kiln.AllBuildFields), kiln.ENotFound, "UpdateBuild of an unknown build")
		got, err := s.GetBuild(ctx, f.org.ID, stored.ID)
		wantOK(t, err, "GetBuild")
		wantEqual(t, "build untouched", got, stored)
		_, err = s.GetBuild(ctx, other.org.ID, stored.ID)
		wantCode(t, err, kiln.ENotFound, "GetBuild from the other organization")
	})
}

// testBuildFilters lists a varied set of builds with every combination of filters and compares
// each answer with a brute-force filter of the builds made.
func testBuildFilters(t *testing.T, s store.Store) {
	ctx := t.Context()
	f := createOrganization(t, s)
	other := createOrganization(t, s)
	settings := twoByTwoSettings(t, s, f)
	branches := []string{"main", "dev", "release/1.0"}
	var builds []*kiln.Build
	for i := range 30 {
		b := newBuild(settings[i%4], kiln.BuildStatuses[i%5])
		b.Platform = kiln.Platforms[(i/2)%3]
		b.BuildType = kiln.BuildTypes[(i/3)%2]
		b.Branch = branches[(i/5)%3]
		if b.Status != kiln.StatusPending {
			b.HeartbeatAt = ptr(b.CreatedAt.Add(time.Duration(i) * time.Second))
		}
		if b.Status == kiln.StatusFailed {
			b.AutoDeployStatus, b.AutoDeployAttempts = kiln.AutoDeployFailed, i%4+1
		}
		wantOK(t, s.CreateBuild(ctx, b), "CreateBuild")
		builds = append(builds, b)
		if i%3 == 0 { // the same keys in another organization must never show up
			o := *b
			o.ID, o.OrganizationID = kiln.NewID(), other.org.ID
			wantOK(t, s.CreateBuild(ctx, &o), "CreateBuild in the other organization")
		}
	}
	// pick returns the filter that takes, for each field set in mask, the value of build a (index
	// fields) or b (the rest).
	pick := func(mask int, a, b *kiln.Build) store.BuildFilter {
		var fl store.BuildFilter
		if mask&1 != 0 {
			fl.ProjectID = a.ProjectID
		}
		if mask&2 != 0 {
			fl.BuildSettingID = a.BuildSettingID
		}
		if mask&4 != 0 {
			fl.Status = a.Status
		}
		if mask&8 != 0 {
			fl.Platform = b.Platform
		}
		if mask&16 != 0 {
			fl.BuildType = b.BuildType
		}
		if mask&32 != 0 {
			fl.Branch = b.Branch
		}
		return fl
	}
	matches := func(fl store.BuildFilter, b *kiln.Build) bool {
		return (fl.ProjectID == "" || fl.ProjectID == b.ProjectID) &&
			(fl.BuildSettingID == "" || fl.BuildSettingID == b.BuildSettingID) &&
			(fl.Status == "" || fl.Status == b.Status) &&
			(fl.Platform == "" || fl.Platform == b.Platform) &&
			(fl.BuildType == "" || fl.BuildType == b.BuildType) &&
			(fl.Branch == "" || fl.Branch == b.Branch)
	}
	for mask := range 64 {
		for _, pair := range [][2]int{{0, 0}, {13, 13}, {7, 22}, {1, 2}} {
			fl := pick(mask, builds[pair[0]], builds[pair[1]])
			var want []string
			for _, b := range builds {
				if matches(fl, b) {
					want = append(want, b.ID)
				}
			}
			got := listBuildIDs(t, s, f.org.ID, fl, 4)
			wantIDs(t, fmt.Sprintf("ListBuilds %+v", fl), got, newestFirst(want))
		}
	}
	// The listed builds are whole.
	byID := map[string]*kiln.Build{}
	for _, b := range builds {
		byID[b.ID] = b
	}
	items, _, err := s.ListBuilds(ctx, f.org.ID, store.BuildFilter{}, store.Page{Limit: store.MaxLimit})
	wantOK(t, err, "ListBuilds")
	for _, b := range items {
		wantEqual(t, "listed build", b, byID[b.ID])
	}
	wantIDs(t, "ListBuilds of an unknown project", listBuildIDs(t, s, f.org.ID, store.BuildFilter{ProjectID: kiln.NewID()}, 4), nil)
}
