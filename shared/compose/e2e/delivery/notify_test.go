package delivery

import (
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
	"github.com/kilnbuild/kiln/shared/compose/serve"
)

func TestNotifyOnCompleteEmailsWhoTriggered(t *testing.T) {
	t.Parallel()
	box := e2e.NewMailbox(t)
	w := e2e.NewWorld(t, e2e.Serve, func(c *serve.Config) { c.SMTPURL = "smtp://" + box.Addr; c.SMTPFrom = "kiln <kiln@studio.example>" })
	pid := w.AddShooter(t)
	notified := w.AddSetting(t, pid, map[string]any{"notifyOnComplete": true})["id"].(string)
	quiet := w.AddSetting(t, pid, map[string]any{"branch": "dev"})["id"].(string)
	w.Shooter.Commit("broken", "Break the cook", "Ada Lovelace", map[string]string{"Shooter/FakeUAT.env": "FAKE_UAT_FAIL=cook\n"})
	failing := w.AddSetting(t, pid, map[string]any{"notifyOnComplete": true, "branch": "broken"})["id"].(string)

	ok := w.Trigger(t, pid, notified, "")
	w.WaitEnded(t, w.Trigger(t, pid, quiet, ""))
	bad := w.Trigger(t, pid, failing, "")
	w.WaitEnded(t, ok)
	w.WaitEnded(t, bad)
	deadline := time.Now().Add(10 * time.Second)
	for len(box.Messages()) < 2 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	mail := box.Messages()
	if len(mail) != 2 {
		t.Fatalf("got %d emails, want 2 (complete and failed, none for the quiet setting): %q", len(mail), mail)
	}
	var complete, failed string
	for _, m := range mail {
		if strings.Contains(m, ok) {
			complete = m
		}
		if strings.Contains(m, bad) {
			failed = m
		}
	}
	if !strings.HasPrefix(complete, "owner@kiln.local\n") || !strings.Contains(complete, "complete") ||
		!strings.Contains(complete, w.URL()+"/downloads/") || !strings.Contains(complete, "Shooter") {
		t.Errorf("completion email:\n%s", complete)
	}
	if !strings.Contains(failed, "failed") || !strings.Contains(failed, "RunUAT exited") || strings.Contains(failed, "/downloads/") {
		t.Errorf("failure email:\n%s", failed)
	}
}
