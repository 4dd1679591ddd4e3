package plans

import (
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

// TestPlanProjectLimitHoldsUnderConcurrency: on the free plan (1 project), add-repo requests made
// at the same moment all pass the early plan check, and the store's atomic count lets exactly one
// of them create its project; the others answer 403 plan_limit_reached and create nothing.
func TestPlanProjectLimitHoldsUnderConcurrency(t *testing.T) {
	e2e.Both(t, planProjectLimitHoldsUnderConcurrency)
}

func planProjectLimitHoldsUnderConcurrency(t *testing.T, dep e2e.Deployment) {
	w := e2e.NewWorld(t, dep)
	w.SetPlan(t, w.OrgID, "free", nil)
	w.Link(t)
	const n = 8
	answers := make([]e2e.Response, n)
	var start, done sync.WaitGroup
	start.Add(1)
	for i := range n {
		done.Go(func() {
			start.Wait()
			answers[i] = w.Do(t, "POST", "/projects/add-repo", w.Token, map[string]any{
				"name": fmt.Sprintf("Shooter %d", i), "installationId": w.Installation, "repoFullName": "studio/shooter",
			})
		})
	}
	start.Done()
	done.Wait()
	created := ""
	for i, r := range answers {
		switch r.Status {
		case http.StatusCreated:
			if created != "" {
				t.Errorf("request %d also created a project (%s)", i, r.Body["id"])
			}
			created = e2e.Field(t, r.Body, "id")
		default:
			e2e.WantError(t, r, http.StatusForbidden, "plan_limit_reached")
			if msg := r.Body["message"]; msg != "the free plan allows 1 project(s)" {
				t.Errorf("request %d: message %q", i, msg)
			}
		}
	}
	if created == "" {
		t.Fatal("no request created a project")
	}
	got := e2e.Items(t, w.Do(t, "GET", "/projects", w.Token, nil))
	if len(got) != 1 || got[0]["id"] != created {
		t.Fatalf("projects %v, want only %s", got, created)
	}
	// Deleting it frees the place.
	if r := w.Do(t, "DELETE", "/projects/"+created, w.Token, nil); r.Status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", r.Status, r.Raw)
	}
	w.AddShooter(t)
}
