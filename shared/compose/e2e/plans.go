package e2e

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/accounts"
	"github.com/kilnbuild/kiln/shared/compose/serve"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// setPlan changes an organization's plan as the operator does (kiln admin plan), while the
// service runs.
func (w *World) SetPlan(t *testing.T, orgID, plan string, maxConcurrent *int) {
	t.Helper()
	if w.AWS != nil { // kiln aws-local: as the admin Lambda does, on its DynamoDB table
		if _, err := accounts.SetPlan(context.Background(), w.AWS.Store(), orgID, kiln.Plan(plan), maxConcurrent, time.Now()); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err := serve.AdminPlan(context.Background(), w.Config.Data, orgID, plan, maxConcurrent, io.Discard); err != nil {
		t.Fatal(err)
	}
}

// slowShooter makes the shooter's builds of branch "slow" take secs seconds.
func (w *World) SlowShooter(secs string) {
	w.Shooter.Commit("slow", "Slow builds", "Ada Lovelace", map[string]string{"Shooter/FakeUAT.env": "FAKE_UAT_SLEEP=" + secs + "\n"})
}

func (w *World) Usage(t *testing.T, query string) map[string]any {
	t.Helper()
	r := w.Do(t, "GET", "/organizations/"+w.OrgID+"/usage"+query, w.Token, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("usage: %d %s", r.Status, r.Raw)
	}
	return r.Body
}
