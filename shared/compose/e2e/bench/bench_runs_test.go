package bench

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/artifacts/fsartifacts"
	"github.com/kilnbuild/kiln/shared/builds"
	"github.com/kilnbuild/kiln/shared/compose/e2e"
	"github.com/kilnbuild/kiln/shared/httpapi"
	"github.com/kilnbuild/kiln/shared/keyring"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store/sqlitestore"
	"github.com/kilnbuild/kiln/shared/workflow/local"
)

// signalRunner tells the benchmark when a build reached a worker, and completes it.
type signalRunner struct {
	st      *sqlitestore.Store
	started chan time.Time
}

func (r *signalRunner) Run(ctx context.Context, b *kiln.Build) error {
	r.started <- time.Now()
	if err := b.Transition(kiln.StatusComplete, time.Now(), ""); err != nil {
		return err
	}
	return r.st.UpdateBuild(ctx, b, kiln.StatusRunning, kiln.AllBuildFields)
}

// benchProject opens a store with an organization, a GitHub project and a manual Linux build
// setting, changed by edit before it is stored: the fixture of the trigger benchmarks.
func benchProject(b *testing.B, edit func(*kiln.BuildSetting)) (*sqlitestore.Store, *kiln.Project, *kiln.BuildSetting) {
	ctx := context.Background()
	st, org, _ := benchOrg(b)
	now := time.Now().UTC().Truncate(time.Millisecond)
	p := &kiln.Project{ID: kiln.NewID(), OrganizationID: org, Name: "P", SourceControl: kiln.SourceGitHub,
		RepoLink: "a/b", InstallationID: "1", CreatedAt: now, UpdatedAt: now}
	s := &kiln.BuildSetting{ID: kiln.NewID(), OrganizationID: p.OrganizationID, ProjectID: p.ID, Platform: kiln.PlatformLinux,
		BuildType: kiln.BuildTypeShipping, Branch: "main", UEVersion: "5.3", Trigger: kiln.TriggerManual, CreatedAt: now, UpdatedAt: now}
	edit(s)
	if err := st.CreateProject(ctx, p, 0); err != nil {
		b.Fatal(err)
	}
	if err := st.CreateBuildSetting(ctx, s); err != nil {
		b.Fatal(err)
	}
	return st, p, s
}

// BenchmarkTriggerToRunning measures how long a triggered build waits before an idle worker runs
// it (trigger → running), beside the cost of one store write of a build in the same run.
// Target: p99 < 50 ms.
func BenchmarkTriggerToRunning(b *testing.B) {
	ctx := context.Background()
	st, p, s := benchProject(b, func(*kiln.BuildSetting) {})
	runner := &signalRunner{st: st, started: make(chan time.Time, 1)}
	lifecycle := &builds.Lifecycle{Builds: st, Projects: st, Artifacts: st, Logger: e2e.DiscardLogger()}
	wf := local.New(st, lifecycle, runner, 1, e2e.DiscardLogger())
	if err := wf.Run(ctx); err != nil {
		b.Fatal(err)
	}
	defer wf.Shutdown(ctx)
	svc := &builds.Service{Store: st, Lifecycle: lifecycle, Workflow: wf, Logger: e2e.DiscardLogger()}

	var waits, writes []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if _, _, err := svc.Trigger(ctx, builds.TriggerRequest{Project: p, Setting: s, Branch: fmt.Sprintf("b%d", i), TriggeredBy: "cron"}); err != nil {
			b.Fatal(err)
		}
		waits = append(waits, (<-runner.started).Sub(t0))
		// Baseline: one plain build write.
		w0 := time.Now()
		extra := &kiln.Build{ID: kiln.NewID(), OrganizationID: p.OrganizationID, ProjectID: p.ID, BuildSettingID: s.ID,
			Status: kiln.StatusFailed, Platform: s.Platform, BuildType: s.BuildType, Branch: "x", UEVersion: "5.3", TriggeredBy: "cron", CreatedAt: s.CreatedAt}
		if err := st.CreateBuild(ctx, extra); err != nil {
			b.Fatal(err)
		}
		writes = append(writes, time.Since(w0))
	}
	b.StopTimer()
	p50, p99 := reportWaits(b, waits)
	w50 := median(writes)
	fmt.Printf("\ntrigger → running with an idle worker, %d builds: p50 %v, p99 %v (target p99 < 50ms); one build write p50 %v (p50 = %.1f writes)\n",
		len(waits), p50.Round(time.Microsecond), p99.Round(time.Microsecond), w50.Round(time.Microsecond), float64(p50)/float64(w50))
}

// BenchmarkDownload serves a 1 GB artifact through its signed URL on loopback and reads it,
// beside reading the same file from disk in the same run. Target: ≥ 0.9× the disk read.
func BenchmarkDownload(b *testing.B) {
	if os.Getenv("KILN_BENCH_DOWNLOAD") != "1" {
		b.Skip("set KILN_BENCH_DOWNLOAD=1 to run (it writes a 1 GB file)")
	}
	ctx := context.Background()
	dir := b.TempDir()
	st, org, token := benchOrg(b)
	arts, err := fsartifacts.New(filepath.Join(dir, "artifacts"))
	if err != nil {
		b.Fatal(err)
	}
	a := &kiln.Artifact{BuildID: kiln.NewID(), OrganizationID: org, ProjectID: kiln.NewID(), BuildSettingID: kiln.NewID(),
		Platform: kiln.PlatformLinux, BuildType: kiln.BuildTypeShipping, UEVersion: "5.3", Branch: "main", Commit: "c",
		SizeBytes: 1 << 30, ChecksumMD5: "x", CreatedAt: time.Now().UTC().Truncate(time.Millisecond)}
	a.Key = org + "/" + a.BuildID + ".tar.gz"
	if err := arts.Put(ctx, a.Key, func(w io.Writer) error { _, err := io.CopyN(w, rand.Reader, a.SizeBytes); return err }); err != nil {
		b.Fatal(err)
	}
	if err := st.CreateBuild(ctx, &kiln.Build{ID: a.BuildID, OrganizationID: org, ProjectID: a.ProjectID, BuildSettingID: a.BuildSettingID,
		Status: kiln.StatusPending, Platform: a.Platform, BuildType: a.BuildType, Branch: "main", UEVersion: "5.3", TriggeredBy: "cron", CreatedAt: a.CreatedAt}); err != nil {
		b.Fatal(err)
	}
	if err := st.CreateArtifact(ctx, a); err != nil {
		b.Fatal(err)
	}
	keys, _ := keyring.New(make([]byte, keyring.MasterKeySize))
	srv := httptest.NewUnstartedServer(nil)
	srv.Start()
	defer srv.Close()
	srv.Config.Handler = httpapi.New(httpapi.Config{Store: st, Keys: keys, Logger: e2e.DiscardLogger(), Artifacts: arts, PublicURL: srv.URL})
	req, _ := http.NewRequest("GET", srv.URL+"/builds/"+a.BuildID+"/download", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	url := fetchJSONField(b, req, "url")

	obj, err := arts.Open(ctx, a.Key)
	if err != nil {
		b.Fatal(err)
	}
	obj.Close()
	diskPath := filepath.Join(dir, "artifacts", filepath.FromSlash(a.Key))
	bare := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.ServeFile(w, r, diskPath) }))
	defer bare.Close()
	var disk, overHTTP, overBare time.Duration
	// A client that reads in large pieces, as curl does.
	client := &http.Client{Transport: &http.Transport{ReadBufferSize: 1 << 20, DisableCompression: true}}
	buf := make([]byte, 1<<20)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		f, err := os.Open(diskPath)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.CopyBuffer(onlyWriter{io.Discard}, f, buf)
		f.Close()
		disk += time.Since(t0)
		t1 := time.Now()
		resp, err := client.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		m, _ := io.CopyBuffer(onlyWriter{io.Discard}, resp.Body, buf)
		resp.Body.Close()
		overHTTP += time.Since(t1)
		t2 := time.Now()
		resp, err = client.Get(bare.URL)
		if err != nil {
			b.Fatal(err)
		}
		k, _ := io.CopyBuffer(onlyWriter{io.Discard}, resp.Body, buf)
		resp.Body.Close()
		overBare += time.Since(t2)
		if n != a.SizeBytes || m != a.SizeBytes || k != a.SizeBytes {
			b.Fatalf("read %d from disk, %d over HTTP, %d from the bare file server", n, m, k)
		}
	}
	b.StopTimer()
	mb := float64(a.SizeBytes) * float64(b.N) / (1 << 20)
	fmt.Printf("\ndownload of a 1 GB artifact: disk read %.0f MB/s; bare http.ServeFile over loopback %.0f MB/s; kiln's signed URL over loopback %.0f MB/s = %.2fx the disk read (target ≥ 0.9x), %.2fx the bare file server\n",
		mb/disk.Seconds(), mb/overBare.Seconds(), mb/overHTTP.Seconds(), disk.Seconds()/overHTTP.Seconds(), overBare.Seconds()/overHTTP.Seconds())
}

// fetchJSONField sends a request and returns one string field of its JSON answer.
func fetchJSONField(b *testing.B, req *http.Request, name string) string {
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	if err := e2e.JSONDecode(resp.Body, &body); err != nil || resp.StatusCode != 200 {
		b.Fatalf("%d %v", resp.StatusCode, err)
	}
	s, _ := body[name].(string)
	return s
}

// onlyWriter hides io.Discard's ReadFrom so the copy uses the benchmark's buffer.
type onlyWriter struct{ io.Writer }
