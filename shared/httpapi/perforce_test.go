package httpapi

import (
	"errors"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
)

func TestPerforceChecksPerOrganization(t *testing.T) {
	c := newPerforceChecks()
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	done, _ := c.start("a", now)
	if done == nil {
		t.Fatal("first check refused")
	}
	// One at a time per organization; another organization is not held up.
	if d, retry := c.start("a", now); d != nil || retry != perforceBusyRetryAfter {
		t.Fatalf("a second check at once: admitted %v, retry %d", d != nil, retry)
	}
	other, _ := c.start("b", now)
	if other == nil {
		t.Fatal("another organization's check refused")
	}
	other(nil)
	done(errors.New("p4 failed"))
	// A refusal before p4 ran (validation_failed) costs nothing of the budget.
	for range 20 {
		d, _ := c.start("a", now)
		if d == nil {
			t.Fatal("a check refused after invalid ones")
		}
		d(kiln.Errorf(kiln.EValidation, "bad serverUrl"))
	}
	// perforceChecksPerMinute a minute: the first check used one, so nine more pass.
	for i := range perforceChecksPerMinute - 1 {
		d, _ := c.start("a", now)
		if d == nil {
			t.Fatalf("check %d of the minute refused", i+2)
		}
		d(nil)
	}
	if d, retry := c.start("a", now); d != nil || retry < 1 || retry > 6 {
		t.Fatalf("check past the minute's budget: admitted %v, retry %d", d != nil, retry)
	}
	if d, _ := c.start("a", now.Add(6*time.Second)); d == nil {
		t.Fatal("no check allowed after the budget refilled")
	}
}
