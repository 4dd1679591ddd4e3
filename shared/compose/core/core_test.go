package core

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/buildlog"
	"github.com/kilnbuild/kiln/shared/builds"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store/sqlitestore"
	"github.com/kilnbuild/kiln/shared/storefixture"
)

// world is a core on SQLite with one free organization.
type world struct {
	st   *sqlitestore.Store
	core *Core
	org  string
}

// wakes counts the delivery wake-ups another process would get.
type wakes struct{ n int }

func (w *wakes) Notify() { w.n++ }

func newWorld(t *testing.T, parts func(*Parts), settings Settings) *world {
	t.Helper()
	st := storefixture.SQLite(t)
	logs, err := buildlog.NewFiles(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	org, _ := storefixture.Org(t, st, kiln.PlanFree, time.Now())
	p := Parts{Store: st, Logs: logs, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if parts != nil {
		parts(&p)
	}
	c, err := New(p, settings)
	if err != nil {
		t.Fatal(err)
	}
	return &world{st: st, core: c, org: org.ID}
}

// build stores a build of the organization in a status; a running one started ran ago.
func (w *world) build(t *testing.T, status kiln.BuildStatus, ran time.Duration) *kiln.Build {
	t.Helper()
	return storefixture.Build(t, w.st, w.org, status, time.Now().Truncate(time.Millisecond).Add(-ran))
}

// TestEveryClaimChecksThePlan: the lifecycle the core makes checks the plan's minutes at each
// claim, whoever claims (a local worker, a build host or agent): once a free organization's
// minutes are used, a waiting build fails with the plan's reason and never starts.
func TestEveryClaimChecksThePlan(t *testing.T) {
	ctx := context.Background()
	claims := map[string]func(lc *builds.Lifecycle, org, id string) (*kiln.Build, error){
		"worker": func(lc *builds.Lifecycle, org, id string) (*kiln.Build, error) {
			return lc.Claim(ctx, org, id, "local/worker-1")
		},
		"host": func(lc *builds.Lifecycle, org, id string) (*kiln.Build, error) {
			return lc.ClaimHost(ctx, org, id, "codebuild", "hash", time.Minute)
		},
	}
	for name, claim := range claims {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t, nil, Settings{Plans: kiln.PlanTable{kiln.PlanFree: {BuildMinutesPerMonth: 2, ConcurrentBuilds: 1, Projects: 1}}})
			ran := w.build(t, kiln.StatusRunning, 3*time.Minute)
			if _, err := w.core.Lifecycle.Fail(ctx, w.org, ran.ID, "RunUAT failed"); err != nil {
				t.Fatal(err)
			}
			waiting := w.build(t, kiln.StatusPending, 0)
			if got, err := claim(w.core.Lifecycle, w.org, waiting.ID); kiln.ErrorCode(err) != kiln.EInvalidState || got != nil {
				t.Fatalf("claim with the plan's minutes used: %v, %v; want invalid_state", got, err)
			}
			b, err := w.st.GetBuild(ctx, w.org, waiting.ID)
			if err != nil {
				t.Fatal(err)
			}
			if b.Status != kiln.StatusFailed || !strings.HasPrefix(b.FailureReason, builds.ReasonPlanLimit) || b.StartedAt != nil {
				t.Fatalf("the refused build: %s %q, started %v", b.Status, b.FailureReason, b.StartedAt)
			}
		})
	}
}

// TestDeliveryWakeUps: a build ready for auto deploy (or redelivered) wakes the deployment's
// deliverer when it has one in another process, and the core's own deliverer otherwise.
func TestDeliveryWakeUps(t *testing.T) {
	other := &wakes{}
	w := newWorld(t, func(p *Parts) { p.DeliveryWaker = other }, Settings{})
	w.core.Events.Deliveries.Notify()
	if other.n != 1 {
		t.Fatalf("the other process's deliverer was woken %d times, want 1", other.n)
	}
	if w.core.AutoDeployer.Wake != other || w.core.API().Deliveries != w.core.AutoDeployer {
		t.Fatal("the deliverer and the API's redeliveries must wake the deployment's deliverer")
	}
	own := newWorld(t, nil, Settings{})
	if own.core.AutoDeployer.Wake != nil {
		t.Fatal("without a deliverer elsewhere, the core's own deliverer works the deliveries")
	}
}

// TestNewRefusesMissingParts: a core without its store, logs or logger is an error, not a panic
// at the first build.
func TestNewRefusesMissingParts(t *testing.T) {
	if _, err := New(Parts{}, Settings{}); err == nil {
		t.Fatal("New without parts: no error")
	}
	w := newWorld(t, nil, Settings{})
	if _, err := New(Parts{Store: w.st, Logger: slog.New(slog.DiscardHandler)}, Settings{SMTPURL: "smtp://"}); err == nil {
		t.Fatal("New without logs: no error")
	}
	logs, _ := buildlog.NewFiles(t.TempDir())
	if _, err := New(Parts{Store: w.st, Logs: logs, Logger: slog.New(slog.DiscardHandler)}, Settings{SMTPURL: "http://not-smtp"}); err == nil || !strings.Contains(err.Error(), "KILN_SMTP_URL") {
		t.Fatalf("New with a bad mail URL: %v, want an error naming KILN_SMTP_URL", err)
	}
}
