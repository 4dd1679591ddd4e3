package local

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/builds"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store/sqlitestore"
)

// TestWorkersClaimAsThemselvesAndReportAsThemselves: each worker claims under its own host name
// and its heartbeats name the same host, so they keep the build alive; once the store says
// another host holds a build, the worker's next heartbeat is refused and it stops its run.
func TestWorkersClaimAsThemselvesAndReportAsThemselves(t *testing.T) {
	defer func(h time.Duration) { heartbeatEvery = h }(heartbeatEvery)
	heartbeatEvery = 20 * time.Millisecond
	hostname, err := os.Hostname()
	if err != nil {
		hostname = "localhost"
	}
	st := openStore(t)
	r := &fakeRunner{st: st, block: true}
	w := New(st, &builds.Lifecycle{Builds: st, Projects: st}, r, 2, nil)
	a := newBuild(t, st, kiln.NewID(), kiln.StatusPending, time.Now().Add(-time.Second))
	b := newBuild(t, st, kiln.NewID(), kiln.StatusPending, time.Now())
	if err := w.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer w.Shutdown(context.Background())

	var hosts []string
	for _, x := range []*kiln.Build{a, b} {
		got := waitHeartbeatAfterStart(t, st, x)
		if !strings.HasPrefix(got.Host, "local/"+hostname+"/worker-") {
			t.Fatalf("build %s claimed by %q, want local/%s/worker-N", x.ID, got.Host, hostname)
		}
		hosts = append(hosts, got.Host)
	}
	slices.Sort(hosts)
	if want := []string{"local/" + hostname + "/worker-1", "local/" + hostname + "/worker-2"}; !slices.Equal(hosts, want) {
		t.Fatalf("hosts %v, want %v", hosts, want)
	}

	// Another host holds a (the store says so): the worker that ran it must let go. (A heartbeat
	// that read a before this write may write it back; then write it again.)
	deadline := time.Now().Add(10 * time.Second)
	for {
		held, err := st.GetBuild(context.Background(), a.OrganizationID, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		if held.Host != "elsewhere/worker-1" {
			held.Host = "elsewhere/worker-1"
			if err := st.UpdateBuild(context.Background(), held, kiln.StatusRunning, kiln.AllBuildFields); err != nil {
				t.Fatal(err)
			}
		}
		r.mu.Lock()
		stopped := slices.Clone(r.stopped)
		r.mu.Unlock()
		if slices.Contains(stopped, a.ID) {
			if slices.Contains(stopped, b.ID) {
				t.Fatalf("the build this machine still holds was stopped too")
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the worker kept running a build another host holds")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got, _ := st.GetBuild(context.Background(), a.OrganizationID, a.ID); got.Host != "elsewhere/worker-1" || got.Status != kiln.StatusRunning {
		t.Fatalf("the rival's build: %s on %q", got.Status, got.Host)
	}
}

// waitHeartbeatAfterStart waits until a running build's host has reported after claiming it.
func waitHeartbeatAfterStart(t *testing.T, st *sqlitestore.Store, b *kiln.Build) *kiln.Build {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err := st.GetBuild(context.Background(), b.OrganizationID, b.ID)
		if err == nil && got.Status == kiln.StatusRunning && got.HeartbeatAt.After(*got.StartedAt) {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("build %s: no heartbeat after its claim (%+v, %v)", b.ID, got, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
