package delivery

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
	"github.com/kilnbuild/kiln/shared/compose/serve"
	"github.com/kilnbuild/kiln/shared/engines"
)

func TestSecondServeOnTheSameDataDirectoryIsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	first := e2e.StartService(t, e2e.Serve, e2e.NewConfig(t, dir))
	_, err := serve.Start(context.Background(), e2e.NewConfig(t, dir), &bytes.Buffer{}, e2e.DiscardLogger())
	if err == nil {
		t.Fatal("a second kiln serve started on the same data directory")
	}
	abs, _ := filepath.Abs(dir)
	for _, want := range []string{abs, "pid " + strconv.Itoa(os.Getpid())} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	// kiln admin is a short transaction beside the service, not a second service.
	var out bytes.Buffer
	if err := serve.AdminBootstrap(context.Background(), dir, "Beside", "lead@beside.example", "Lead", "", &out); err != nil {
		t.Fatalf("admin beside a running service: %v", err)
	}
	if err := first.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	e2e.StartService(t, e2e.Serve, e2e.NewConfig(t, dir)) // the lock went with the first service
}

func TestSavingPerforceCredentialsWithoutAP4Client(t *testing.T) {
	t.Parallel()
	notExecutable := filepath.Join(t.TempDir(), "p4")
	if err := os.WriteFile(notExecutable, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, p4 := range map[string]string{"missing": filepath.Join(t.TempDir(), "no-p4"), "not executable": notExecutable} {
		t.Run(name, func(t *testing.T) {
			w := e2e.NewWorld(t, e2e.Serve, e2e.WithP4(p4))
			r := w.Do(t, "PATCH", "/organizations/"+w.OrgID+"/perforce", w.Token,
				map[string]any{"serverUrl": "ssl:127.0.0.1:1666", "userName": "builder", "ticket": "T1CKET"})
			e2e.WantError(t, r, 503, "service_unavailable")
			if msg := r.Body["message"].(string); !strings.Contains(msg, "no Perforce client") {
				t.Errorf("message %q does not say the service has no Perforce client", msg)
			}
			if n := strings.Count(w.Logs.String(), "no Perforce client (KILN_P4)"); n != 1 {
				t.Errorf("warned %d times about KILN_P4 at start, want once:\n%s", n, w.Logs.String())
			}
			if strings.Contains(w.Logs.String(), "T1CKET") {
				t.Error("the ticket reached the log")
			}
		})
	}
}

func TestServeReportsEnginesAtStart(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.Serve, func(c *serve.Config) {
		// The README's copy run twice used to nest a copy; one without RunUAT.sh is reported.
		nested := filepath.Join(c.Engines, "5.5", "fake-engine", engines.RunUATPath)
		if err := os.MkdirAll(filepath.Dir(nested), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(nested, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	})
	logs := w.Logs.String()
	for _, v := range []string{"5.3", "5.4"} {
		want := `"msg":"engine found","version":"` + v + `","run_uat":"` + filepath.Join(w.Config.Engines, v, engines.RunUATPath) + `"`
		if !strings.Contains(logs, want) {
			t.Errorf("the start log lacks %s:\n%s", want, logs)
		}
	}
	if !strings.Contains(logs, `"msg":"engine directory not usable (KILN_ENGINES)","path":"`+filepath.Join(w.Config.Engines, "5.5")) ||
		!strings.Contains(logs, "fake-engine/: copied one level too deep") {
		t.Errorf("no warning about 5.5 without RunUAT.sh:\n%s", logs)
	}

	pid := w.AddShooter(t)
	r := w.Do(t, "POST", "/projects/"+pid+"/build-settings", w.Token, map[string]any{
		"platform": "Linux", "buildType": "Shipping", "ueVersion": "5.2", "trigger": "manual", "branch": "main"})
	e2e.WantError(t, r, 400, "engine_not_found")
	if msg := r.Body["message"].(string); msg != "no build host provides Unreal Engine 5.2; this service provides 5.3, 5.4" {
		t.Errorf("message %q does not list the versions provided", msg)
	}
}

func TestAdminTokenReplacesALostOwnerToken(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ts := e2e.StartService(t, e2e.Serve, e2e.NewConfig(t, dir))
	if !strings.Contains(ts.Out.String(), "kiln admin token --data "+dir+" --email owner@kiln.local") {
		t.Errorf("the first start does not say how to recover the token:\n%s", ts.Out.String())
	}
	for _, orgID := range []string{"", e2e.OrgOf(t, ts)} { // the Local organization by default
		var out bytes.Buffer
		if err := serve.AdminToken(context.Background(), dir, orgID, "Owner@Kiln.Local", &out); err != nil {
			t.Fatalf("admin token (org %q): %v", orgID, err)
		}
		token := e2e.TokenRe.FindString(out.String())
		if token == "" || token == ts.Token || strings.Count(out.String(), "\n") != 1 {
			t.Fatalf("admin token printed %q", out.String())
		}
		r := ts.Do(t, "GET", "/auth/me", token, nil)
		if r.Status != 200 || e2e.Field(t, r.Body, "membership", "role") != "owner" || e2e.Field(t, r.Body, "user", "email") != "owner@kiln.local" {
			t.Fatalf("the new token: %d %s", r.Status, r.Raw)
		}
	}
	if err := serve.AdminToken(context.Background(), dir, "", "nobody@kiln.local", io.Discard); err == nil || !strings.Contains(err.Error(), "no member with email") {
		t.Errorf("unknown email: %v", err)
	}
}

func TestAdminRefusesADataDirectoryThatDoesNotExist(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "typo")
	for name, call := range map[string]func() error{
		"bootstrap": func() error {
			return serve.AdminBootstrap(context.Background(), missing, "S", "a@b.example", "A", "", io.Discard)
		},
		"user": func() error {
			return serve.AdminAddUser(context.Background(), missing, "x", "a@b.example", "A", "member", io.Discard)
		},
		"token": func() error { return serve.AdminToken(context.Background(), missing, "x", "a@b.example", io.Discard) },
	} {
		if err := call(); err == nil || !strings.Contains(err.Error(), missing+" does not exist") {
			t.Errorf("%s: %v, want the directory named as missing", name, err)
		}
		if _, err := os.Stat(missing); err == nil {
			t.Fatalf("%s created %s", name, missing)
		}
	}
}

func TestAFailedAutoDeployBuildIsNeverPendingDelivery(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.Serve, e2e.LoopbackAllowed)
	rc := e2e.NewReceiver(t, func(int) int { return 204 })
	pid := w.AddShooter(t)
	// A branch that does not exist: the build fails at checkout.
	sid := w.AddSetting(t, pid, map[string]any{"branch": "no-such-branch", "autoDeploy": true, "uploadBuildUrl": rc.URL})["id"].(string)
	id := w.Trigger(t, pid, sid, "")
	if b := w.WaitEnded(t, id); b["status"] != "failed" || b["autoDeployStatus"] != nil {
		t.Fatalf("failed auto deploy build: status %v, autoDeployStatus %v", b["status"], b["autoDeployStatus"])
	}
	// Cancelled while pending, and superseded.
	w.Shooter.Commit("slow", "Slow build", "Ada Lovelace", map[string]string{"Shooter/FakeUAT.env": "FAKE_UAT_SLEEP=60\n"})
	slow := w.AddSetting(t, pid, map[string]any{"branch": "slow", "autoDeploy": true, "uploadBuildUrl": rc.URL})["id"].(string)
	first := w.Trigger(t, pid, slow, "")
	second := w.Trigger(t, pid, slow, "")
	w.Do(t, "POST", "/builds/"+second+"/cancel", w.Token, nil)
	for _, id := range []string{first, second} {
		if b := w.WaitEnded(t, id); b["status"] == "complete" || b["autoDeployStatus"] != nil {
			t.Errorf("build %s: status %v, autoDeployStatus %v", id, b["status"], b["autoDeployStatus"])
		}
	}
	if n := len(rc.Got()); n != 0 {
		t.Errorf("the receiver got %d deliveries of builds that did not complete", n)
	}
}
