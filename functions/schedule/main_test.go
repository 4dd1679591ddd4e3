package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/kilnbuild/kiln/shared/accounts"
	"github.com/kilnbuild/kiln/shared/artifacts/fsartifacts"
	"github.com/kilnbuild/kiln/shared/buildlog"
	"github.com/kilnbuild/kiln/shared/builds"
	"github.com/kilnbuild/kiln/shared/compose/awsapp"
	"github.com/kilnbuild/kiln/shared/keyring"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
	"github.com/kilnbuild/kiln/shared/store/sqlitestore"
)

// workflow records what the tick asks of the build workflow.
type workflow struct {
	mu            sync.Mutex
	started, stop []string
}

func (w *workflow) Start(ctx context.Context, b *kiln.Build) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.started = append(w.started, b.ID)
	return nil
}

func (w *workflow) Stop(ctx context.Context, b *kiln.Build) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stop = append(w.stop, b.ID)
	return nil
}

// queue records the delivery messages sent.
type queue struct {
	mu   sync.Mutex
	sent []awsapp.DeliveryMessage
}

func (q *queue) Send(ctx context.Context, m awsapp.DeliveryMessage, delay time.Duration) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.sent = append(q.sent, m)
	return nil
}

// fixture is a store with an organization and a project, the tick's parts and its handler.
type fixture struct {
	st        *sqlitestore.Store
	arts      *fsartifacts.Store
	org       string
	project   *kiln.Project
	wf        *workflow
	queue     *queue
	now       time.Time
	handler   lambda.Handler
	tickEvent []byte
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	st, err := sqlitestore.Open(ctx, filepath.Join(t.TempDir(), "kiln.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	// Half a minute into a minute: two ticks of this test fall in the same schedule slot.
	now := time.Now().UTC().Truncate(time.Minute).Add(30 * time.Second)
	created, err := accounts.CreateOrganization(ctx, st, accounts.NewOrganization{Name: "Studio", OwnerEmail: "a@studio.example", OwnerName: "A"}, now)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{st: st, org: created.Organization.ID, wf: &workflow{}, queue: &queue{}, now: now}
	f.project = &kiln.Project{ID: kiln.NewID(), OrganizationID: f.org, Name: "P", SourceControl: kiln.SourceGitHub,
		RepoLink: "studio/game", InstallationID: "1", CreatedAt: now, UpdatedAt: now}
	if err := st.CreateProject(ctx, f.project, 0); err != nil {
		t.Fatal(err)
	}
	if f.arts, err = fsartifacts.New(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	logs, err := buildlog.NewFiles(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	keys, err := keyring.New(bytes.Repeat([]byte{7}, keyring.MasterKeySize))
	if err != nil {
		t.Fatal(err)
	}
	s, err := awsapp.NewSchedule(awsapp.BackgroundConfig{ArtifactRetention: 30 * 24 * time.Hour}, awsapp.Parts{
		Store: st, Logs: logs, Artifacts: f.arts, Keys: keys, Workflow: f.wf, Queue: f.queue,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: func() time.Time { return now },
	})
	if err != nil {
		t.Fatal(err)
	}
	f.handler = lambda.NewHandler(s.Handle)
	f.tickEvent = sampleTick(t)
	return f
}

// sampleTick is events/schedule-tick.json, checked to decode strictly into the handler's type.
func sampleTick(t *testing.T) []byte {
	t.Helper()
	raw, err := os.ReadFile("../../events/schedule-tick.json")
	if err != nil {
		t.Fatal(err)
	}
	var ev events.CloudWatchEvent
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ev); err != nil {
		t.Fatalf("schedule-tick.json is not a CloudWatchEvent: %v", err)
	}
	if ev.DetailType != "Scheduled Event" || ev.Time.IsZero() {
		t.Fatalf("schedule-tick.json is not a scheduled event: %+v", ev)
	}
	return raw
}

// tick invokes the handler with the sample event at another time.
func (f *fixture) tick(t *testing.T, at time.Time) {
	t.Helper()
	raw := bytes.Replace(f.tickEvent, []byte(`"2026-11-23T03:00:00Z"`), []byte(`"`+at.UTC().Format(time.RFC3339)+`"`), 1)
	if _, err := f.handler.Invoke(context.Background(), raw); err != nil {
		t.Fatalf("tick: %v", err)
	}
}

func (f *fixture) build(t *testing.T, edit func(b *kiln.Build)) *kiln.Build {
	t.Helper()
	b := &kiln.Build{ID: kiln.NewID(), OrganizationID: f.org, ProjectID: f.project.ID, BuildSettingID: kiln.NewID(), Status: kiln.StatusPending,
		Platform: kiln.PlatformLinux, BuildType: kiln.BuildTypeShipping, Branch: kiln.NewID(), UEVersion: "5.3", TriggeredBy: "test", CreatedAt: f.now.Add(-time.Hour)}
	edit(b)
	if err := f.st.CreateBuild(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	return b
}

// TestTickTriggersADueScheduleOnce: ticks run twice at once and once more after trigger the
// slot's build once, and hand it to the workflow once.
func TestTickTriggersADueScheduleOnce(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	setting := &kiln.BuildSetting{ID: kiln.NewID(), OrganizationID: f.org, ProjectID: f.project.ID, Platform: kiln.PlatformLinux,
		BuildType: kiln.BuildTypeShipping, Branch: "main", UEVersion: "5.3", Trigger: kiln.TriggerScheduled, Schedule: "* * * * *",
		CreatedAt: f.now.Add(-5 * time.Minute), UpdatedAt: f.now.Add(-5 * time.Minute)}
	if err := f.st.CreateBuildSetting(ctx, setting); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() { f.tick(t, f.now) })
	}
	wg.Wait()
	f.tick(t, f.now)
	bs, _, err := f.st.ListBuilds(ctx, f.org, store.BuildFilter{ProjectID: f.project.ID}, store.Page{})
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 1 || bs[0].BuildSettingID != setting.ID || bs[0].TriggeredBy != "cron" {
		t.Fatalf("%d builds after three ticks of one slot, want the one scheduled build: %+v", len(bs), bs)
	}
	if !slices.Equal(f.wf.started, []string{bs[0].ID}) {
		t.Fatalf("workflow started %v, want [%s]", f.wf.started, bs[0].ID)
	}
}

// TestTickFailsASilentBuildAndStopsIt: a running build whose host stopped reporting fails and its
// workflow is stopped; one that reported recently runs on.
func TestTickFailsASilentBuildAndStopsIt(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	long, recent := f.now.Add(-10*time.Minute), f.now.Add(-5*time.Second)
	silent := f.build(t, func(b *kiln.Build) {
		b.Status, b.StartedAt, b.HeartbeatAt, b.Host = kiln.StatusRunning, &long, &long, "codebuild:x"
	})
	alive := f.build(t, func(b *kiln.Build) {
		b.Status, b.StartedAt, b.HeartbeatAt, b.Host = kiln.StatusRunning, &long, &recent, "codebuild:y"
	})
	f.tick(t, f.now)
	got, err := f.st.GetBuild(ctx, f.org, silent.ID)
	if err != nil || got.Status != kiln.StatusFailed || got.FailureReason != builds.ReasonSilentHost {
		t.Fatalf("silent build: %+v %v, want failed with %q", got, err, builds.ReasonSilentHost)
	}
	if got, _ := f.st.GetBuild(ctx, f.org, alive.ID); got.Status != kiln.StatusRunning {
		t.Fatalf("the build whose host reports is %s", got.Status)
	}
	if !slices.Equal(f.wf.stop, []string{silent.ID}) {
		t.Fatalf("workflow stopped %v, want [%s]", f.wf.stop, silent.ID)
	}
}

// TestTickRetentionOnceADay: the day's retention runs on the first tick at or after 03:00 UTC
// and only then, deleting the old artifacts' objects with their records.
func TestTickRetentionOnceADay(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	old := func() *kiln.Artifact {
		b := f.build(t, func(b *kiln.Build) { b.Status = kiln.StatusComplete })
		a := &kiln.Artifact{BuildID: b.ID, OrganizationID: f.org, ProjectID: f.project.ID, BuildSettingID: b.BuildSettingID,
			Platform: b.Platform, BuildType: b.BuildType, UEVersion: b.UEVersion, Branch: b.Branch, Commit: "abc",
			Key: f.org + "/" + b.ID + ".tar.gz", SizeBytes: 5, ChecksumMD5: "x", CreatedAt: f.now.Add(-40 * 24 * time.Hour)}
		if err := f.arts.Put(ctx, a.Key, func(w io.Writer) error { _, err := w.Write([]byte("bytes")); return err }); err != nil {
			t.Fatal(err)
		}
		if err := f.st.CreateArtifact(ctx, a); err != nil {
			t.Fatal(err)
		}
		return a
	}
	kept := func(a *kiln.Artifact) bool {
		_, recErr := f.st.GetArtifact(ctx, a.OrganizationID, a.BuildID)
		obj, objErr := f.arts.Open(ctx, a.Key)
		if objErr == nil {
			obj.Close()
		}
		if (recErr == nil) != (objErr == nil) {
			t.Fatalf("artifact %s: record %v, object %v: deleted apart", a.BuildID, recErr, objErr)
		}
		return recErr == nil
	}
	day := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	first := old()
	f.tick(t, day.Add(2*time.Hour+59*time.Minute))
	if !kept(first) {
		t.Fatal("retention ran before 03:00")
	}
	f.tick(t, day.Add(3*time.Hour))
	if kept(first) {
		t.Fatal("retention did not run on the first tick at 03:00")
	}
	second := old()
	f.tick(t, day.Add(3*time.Hour+time.Minute))
	f.tick(t, day.Add(23*time.Hour+59*time.Minute))
	if !kept(second) {
		t.Fatal("retention ran twice on one day")
	}
	f.tick(t, day.Add(24*time.Hour+3*time.Hour+7*time.Minute)) // the 03:00 tick of the next day was lost
	if kept(second) {
		t.Fatal("retention did not run on the next day")
	}
}

// TestTickQueuesDueDeliveries: one message per due auto deploy and due webhook delivery.
func TestTickQueuesDueDeliveries(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	due := f.build(t, func(b *kiln.Build) { b.Status, b.AutoDeployStatus = kiln.StatusComplete, kiln.AutoDeployPending })
	f.build(t, func(b *kiln.Build) {
		b.Status, b.AutoDeployStatus, b.AutoDeployNextAt = kiln.StatusComplete, kiln.AutoDeployPending, f.now.Add(time.Hour)
	})
	hook := &kiln.Webhook{ID: kiln.NewID(), OrganizationID: f.org, URL: "https://hooks.studio.example/", Active: true,
		Events: []kiln.WebhookEvent{kiln.EventBuildComplete}, Secret: []byte("sealed"), CreatedAt: f.now, UpdatedAt: f.now}
	if err := f.st.CreateWebhook(ctx, hook); err != nil {
		t.Fatal(err)
	}
	del := &kiln.WebhookDelivery{ID: kiln.NewID(), OrganizationID: f.org, WebhookID: hook.ID, Event: kiln.EventBuildComplete,
		Payload: []byte(`{}`), Status: kiln.DeliveryPending, CreatedAt: f.now, UpdatedAt: f.now}
	if err := f.st.CreateWebhookDelivery(ctx, del); err != nil {
		t.Fatal(err)
	}
	f.tick(t, f.now)
	want := []awsapp.DeliveryMessage{
		{Kind: awsapp.KindDeploy, OrganizationID: f.org, BuildID: due.ID},
		{Kind: awsapp.KindWebhook, OrganizationID: f.org, WebhookID: hook.ID, DeliveryID: del.ID},
	}
	if !slices.Equal(f.queue.sent, want) {
		t.Fatalf("queued %+v, want %+v", f.queue.sent, want)
	}
}
