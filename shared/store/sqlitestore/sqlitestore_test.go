package sqlitestore_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
	"github.com/kilnbuild/kiln/shared/store/sqlitestore"
	"github.com/kilnbuild/kiln/shared/store/storetest"
)

func open(t *testing.T, path string) *sqlitestore.Store {
	t.Helper()
	s, err := sqlitestore.Open(t.Context(), path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// earlierDatabase makes a database at path as an earlier kiln left it: every migration whose file
// name sorts before version ("0005": the schema as it was at 0004), then script with args (its
// rows and its PRAGMA user_version).
func earlierDatabase(t *testing.T, path, version, script string, args ...any) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	names, err := filepath.Glob("migrations/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if filepath.Base(name) >= version {
			break
		}
		text, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(t.Context(), string(text)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if _, err := db.ExecContext(t.Context(), script, args...); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		return open(t, filepath.Join(t.TempDir(), "kiln.db"))
	})
}

// newOrg makes an organization with its owner and token, all fresh.
func newOrg(name string) (*kiln.Organization, *kiln.Member, *kiln.Token) {
	at := time.Now().UTC().Truncate(time.Millisecond)
	org := &kiln.Organization{ID: kiln.NewID(), Name: name, Plan: kiln.PlanFree, CreatedAt: at, UpdatedAt: at}
	org.Slug = kiln.Slugify(name) + "-" + org.ID
	owner := &kiln.Member{OrganizationID: org.ID, Role: kiln.RoleOwner, CreatedAt: at,
		User: kiln.User{ID: kiln.NewID(), Email: "owner@example.com", Name: "Owner", CreatedAt: at}}
	tk := &kiln.Token{Credential: kiln.Credential{ID: kiln.NewID(), OrganizationID: org.ID, Name: "first", Hash: "hash-" + kiln.NewID(), Hint: "kiln_abc", CreatedAt: at}, UserID: owner.User.ID}
	return org, owner, tk
}

// TestTwoProcesses opens the same file twice, as kiln serve and kiln admin would, and writes
// through both at once.
func TestTwoProcesses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kiln.db")
	stores := []*sqlitestore.Store{open(t, path), open(t, path)}
	ctx := t.Context()
	org, owner, tk := newOrg("Shared")
	if err := stores[0].CreateOrganization(ctx, org, owner, tk); err != nil {
		t.Fatalf("CreateOrganization: %v", err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 1000)
	for i, s := range stores {
		for g := range 8 {
			wg.Go(func() {
				for n := range 20 {
					if err := writeSome(ctx, s, org.ID, fmt.Sprintf("%d-%d-%d", i, g, n)); err != nil {
						errs <- err
						return
					}
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("write: %v", err)
	}
	for _, s := range stores {
		items, _, err := s.ListMembers(ctx, org.ID, store.Page{Limit: store.MaxLimit})
		if err != nil {
			t.Fatalf("ListMembers: %v", err)
		}
		if len(items) != store.MaxLimit {
			t.Fatalf("ListMembers: %d members, want a full page of %d", len(items), store.MaxLimit)
		}
	}
}

// writeSome adds a member (a transaction), a token, a build and moves the build to running.
func writeSome(ctx context.Context, s *sqlitestore.Store, orgID, tag string) error {
	at := time.Now().UTC().Truncate(time.Millisecond)
	m := &kiln.Member{OrganizationID: orgID, Role: kiln.RoleMember, CreatedAt: at,
		User: kiln.User{ID: kiln.NewID(), Email: "m" + tag + "@example.com", Name: "M", CreatedAt: at}}
	tk := &kiln.Token{Credential: kiln.Credential{ID: kiln.NewID(), OrganizationID: orgID, Hash: "h" + kiln.NewID(), CreatedAt: at}, UserID: m.User.ID}
	if err := s.CreateMember(ctx, m, tk); err != nil {
		return fmt.Errorf("CreateMember: %w", err)
	}
	extra := *tk
	extra.ID, extra.Hash = kiln.NewID(), "h"+kiln.NewID()
	if err := s.CreateToken(ctx, &extra); err != nil {
		return fmt.Errorf("CreateToken: %w", err)
	}
	b := &kiln.Build{ID: kiln.NewID(), OrganizationID: orgID, ProjectID: "p", BuildSettingID: "s",
		Status: kiln.StatusPending, CreatedAt: at}
	if err := s.CreateBuild(ctx, b); err != nil {
		return fmt.Errorf("CreateBuild: %w", err)
	}
	if err := b.Transition(kiln.StatusRunning, at, ""); err != nil {
		return err
	}
	if err := s.UpdateBuild(ctx, b, kiln.StatusPending, kiln.AllBuildFields); err != nil {
		return fmt.Errorf("UpdateBuild: %w", err)
	}
	return nil
}

func TestReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kiln.db")
	ctx := t.Context()
	s, err := sqlitestore.Open(ctx, path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	org, owner, tk := newOrg("Durable")
	if err := s.CreateOrganization(ctx, org, owner, tk); err != nil {
		t.Fatalf("CreateOrganization: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	s = open(t, path) // migrations run again and find nothing to do
	got, err := s.GetOrganization(ctx, org.ID)
	if err != nil {
		t.Fatalf("GetOrganization after reopen: %v", err)
	}
	if got.Slug != org.Slug || !got.CreatedAt.Equal(org.CreatedAt) {
		t.Fatalf("organization after reopen: %+v, want %+v", got, org)
	}
	if _, err := s.GetTokenByHash(ctx, tk.Hash); err != nil {
		t.Fatalf("GetTokenByHash after reopen: %v", err)
	}
}

// TestMigrateInstallations opens a database made at schema version 1, where an installation could
// be linked to several organizations and "none" was the empty string, and checks what migration 2
// makes of it.
func TestMigrateInstallations(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kiln.db")
	ctx := t.Context()
	// Ids in creation order; "A" and "C" share installation 7, "B" and "D" have none.
	earlierDatabase(t, path, "0002", `PRAGMA user_version = 1;
		INSERT INTO organizations VALUES ('A', 'Studio', 'slug-0', 'free', '{}', '7', 1, 2),
			('B', 'Studio', 'slug-1', 'free', '{}', '', 1, 2), ('C', 'Studio', 'slug-2', 'free', '{}', '7', 1, 2),
			('D', 'Studio', 'slug-3', 'free', '{}', '', 1, 2)`)

	s := open(t, path)
	want := map[string]string{"A": "7", "B": "", "C": "", "D": ""}
	for id, inst := range want {
		o, err := s.GetOrganization(ctx, id)
		if err != nil {
			t.Fatalf("GetOrganization %s: %v", id, err)
		}
		if o.Integrations.GitHubInstallationID != inst || !o.UpdatedAt.Equal(time.UnixMilli(2)) {
			t.Fatalf("organization %s after migration: %+v, want installation %q", id, o, inst)
		}
	}
	if o, err := s.GetOrganizationByInstallation(ctx, "7"); err != nil || o.ID != "A" {
		t.Fatalf("GetOrganizationByInstallation(7) = %+v, %v; want A", o, err)
	}
	// Organizations without an installation do not collide in the unique index.
	if _, err := s.LinkGitHubInstallation(ctx, "B", "8", time.Now()); err != nil {
		t.Fatalf("LinkGitHubInstallation: %v", err)
	}
	if _, err := s.LinkGitHubInstallation(ctx, "C", "7", time.Now()); !kiln.IsCode(err, kiln.EGitHubInstallationInUse) {
		t.Fatalf("LinkGitHubInstallation of A's installation to C: %v", err)
	}
}

// TestMigrateBuilds opens a database made at an earlier schema version holding one build, and
// checks what the next migration makes of it.
func TestMigrateBuilds(t *testing.T) {
	for _, tc := range []struct {
		name    string
		version string // the first migration not applied
		script  string // the build's row (its id the one argument) and the schema version
		check   func(t *testing.T, s *sqlitestore.Store, path, id string)
	}{{
		// At schema version 3, a pending build: after migration 4 it has no heartbeat and heads
		// the queue.
		name: "HeartbeatsAndScans", version: "0004",
		script: `PRAGMA user_version = 3;
			INSERT INTO builds VALUES ('org', ?, 'p', 's', 'pending', 'Linux', 'Shipping', 'main', 'c', '', '', '5.3',
				'cron', '', '', '', 1, NULL, NULL)`,
		check: func(t *testing.T, s *sqlitestore.Store, _, id string) {
			b, err := s.GetBuild(t.Context(), "org", id)
			if err != nil || b.HeartbeatAt != nil || b.Status != kiln.StatusPending {
				t.Fatalf("GetBuild after migration = %+v, %v; want a pending build without heartbeat", b, err)
			}
			queued, err := s.QueuedBuilds(t.Context(), kiln.StatusPending, 1)
			if err != nil || len(queued) != 1 || queued[0].ID != id {
				t.Fatalf("QueuedBuilds after migration = %v, %v; want the old build", queued, err)
			}
		},
	}, {
		// At schema version 4, a complete build whose delivery is pending: after migration 5 it
		// has made no attempts and awaits delivery, found through the partial index
		// builds_delivery_due.
		name: "AutoDeployDelivery", version: "0005",
		script: `PRAGMA user_version = 4;
			INSERT INTO builds VALUES ('org', ?, 'p', 's', 'complete', 'Linux', 'Shipping', 'main', 'c', '', '', '5.3',
				'cron', '', 'pending', '', 1, 2, 3, NULL)`,
		check: func(t *testing.T, s *sqlitestore.Store, path, id string) {
			b, err := s.GetBuild(t.Context(), "org", id)
			if err != nil || b.AutoDeployAttempts != 0 || b.AutoDeployStatus != kiln.AutoDeployPending {
				t.Fatalf("GetBuild after migration = %+v, %v; want a build pending delivery without attempts", b, err)
			}
			awaiting, err := s.DueBuildDeliveries(t.Context(), time.Now(), 1, 1)
			if err != nil || len(awaiting) != 1 || awaiting[0].ID != id || !awaiting[0].AutoDeployNextAt.IsZero() {
				t.Fatalf("DueBuildDeliveries after migration = %v, %v; want the old build, due now", awaiting, err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			// The scan's query (as in scans.go) reads the partial index in order, without a sort
			// (and INDEXED BY fails if the WHERE clause no longer implies the index's).
			wantQueryPlanIndex(t, path, `SELECT id FROM builds INDEXED BY builds_delivery_due
				WHERE status = 'complete' AND auto_deploy_status IN ('pending', 'delivering') AND auto_deploy_next_at <= 5`,
				"builds_delivery_due")
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "kiln.db")
			id := (&kiln.IDGenerator{}).New(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC))
			earlierDatabase(t, path, tc.version, tc.script, id)
			tc.check(t, open(t, path), path, id)
		})
	}
}

// TestPendingWebhookDeliveriesPlan checks that the count of an organization's pending deliveries
// (the redelivery cap) reads the index webhook_deliveries_due.
func TestPendingWebhookDeliveriesPlan(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kiln.db")
	if err := open(t, path).Close(); err != nil {
		t.Fatal(err)
	}
	wantQueryPlanIndex(t, path, `SELECT id FROM webhook_deliveries
		WHERE status = 'pending' AND org_id = 'o' LIMIT 10`, "webhook_deliveries_due")
}

// wantQueryPlanIndex fails the test unless SQLite's plan of query, on the database at path,
// reads index.
func wantQueryPlanIndex(t *testing.T, path, query, index string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, notused int
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if joined := strings.Join(plan, "; "); !strings.Contains(joined, index) {
		t.Fatalf("query plan %q: want the index %s", joined, index)
	}
}
