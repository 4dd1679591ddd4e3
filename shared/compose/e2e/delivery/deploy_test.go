package delivery

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
	"github.com/kilnbuild/kiln/shared/compose/serve"
)

func TestAutoDeployDeliversTheArtifact(t *testing.T) { e2e.Both(t, autoDeployDeliversTheArtifact) }

func autoDeployDeliversTheArtifact(t *testing.T, dep e2e.Deployment) {
	w := e2e.NewWorld(t, dep, e2e.LoopbackAllowed)
	rc := e2e.NewReceiver(t, func(n int) int {
		if n == 1 {
			return http.StatusServiceUnavailable
		}
		return http.StatusNoContent
	})
	pid := w.AddShooter(t)
	sid := w.AddSetting(t, pid, map[string]any{"autoDeploy": true, "uploadBuildUrl": rc.URL + "/upload", "uploadBuildAuthHeader": "Bearer pixel-streaming-secret"})["id"].(string)
	id := w.Trigger(t, pid, sid, "")
	b := w.WaitDeploy(t, id)
	if b["status"] != "complete" || b["autoDeployStatus"] != "succeeded" || b["autoDeployAttempts"] != float64(2) || b["autoDeployError"] != nil {
		t.Fatalf("after delivery: %v", b)
	}
	d := w.Do(t, "GET", "/builds/"+id+"/download", w.Token, nil)
	reqs := rc.Got()
	if len(reqs) != 2 {
		t.Fatalf("receiver got %d requests", len(reqs))
	}
	got := reqs[1]
	if got.Auth != "Bearer pixel-streaming-secret" || got.Chunked || got.Length <= 0 || !strings.HasPrefix(got.ContentType, "multipart/form-data") {
		t.Errorf("request: %+v", got)
	}
	if strings.Join(got.Parts, ",") != "metadata:application/json,artifact:application/gzip" || got.Filename != id+".tar.gz" {
		t.Errorf("parts %v, filename %q", got.Parts, got.Filename)
	}
	m := got.Metadata
	if m["buildId"] != id || m["projectId"] != pid || m["platform"] != "Linux" || m["buildType"] != "Shipping" || m["ueVersion"] != "5.3" || m["branch"] != "main" || m["commit"] != b["commit"] {
		t.Errorf("metadata %v", m)
	}
	if got.ArtifactMD5 != e2e.Field(t, d.Body, "checksumMd5") {
		t.Errorf("received artifact md5 %s, artifact %s", got.ArtifactMD5, e2e.Field(t, d.Body, "checksumMd5"))
	}
}

func TestAutoDeployFailuresLeaveTheBuildComplete(t *testing.T) {
	e2e.Both(t, autoDeployFailuresLeaveTheBuildComplete)
}

func autoDeployFailuresLeaveTheBuildComplete(t *testing.T, dep e2e.Deployment) {
	w := e2e.NewWorld(t, dep, e2e.LoopbackAllowed)
	pid := w.AddShooter(t)
	always500 := e2e.NewReceiver(t, func(int) int { return 500 })
	target := e2e.NewReceiver(t, func(int) int { return 204 })
	redirect := httptest.NewServer(http.RedirectHandler(target.URL+"/stolen", http.StatusFound))
	defer redirect.Close()
	cases := []struct {
		name, url, wantErr string
		attempts           float64
	}{
		{"always 500", always500.URL, "500", 3},
		{"redirect", redirect.URL, "302", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sid := w.AddSetting(t, pid, map[string]any{"autoDeploy": true, "uploadBuildUrl": c.url, "branch": "dev"})["id"].(string)
			id := w.Trigger(t, pid, sid, "")
			b := w.WaitDeploy(t, id)
			if b["status"] != "complete" || b["autoDeployStatus"] != "failed" || !strings.Contains(b["autoDeployError"].(string), c.wantErr) || b["autoDeployAttempts"] != c.attempts {
				t.Fatalf("after delivery: %v", b)
			}
			d := w.Do(t, "GET", "/builds/"+id+"/download", w.Token, nil)
			if d.Status != 200 || len(e2e.FetchArtifact(t, e2e.Field(t, d.Body, "url"))) == 0 {
				t.Fatalf("not downloadable after a failed delivery: %d", d.Status)
			}
		})
	}
	if n := len(target.Got()); n != 0 {
		t.Fatalf("the redirect target received %d requests", n)
	}
	// Redeliver the failed one to a working destination.
	sid := w.AddSetting(t, pid, map[string]any{"autoDeploy": true, "uploadBuildUrl": always500.URL, "branch": "main"})["id"].(string)
	id := w.Trigger(t, pid, sid, "")
	w.WaitDeploy(t, id)
	w.Do(t, "PATCH", "/projects/"+pid+"/build-settings/"+sid, w.Token, map[string]any{"uploadBuildUrl": target.URL})
	r := w.Do(t, "POST", "/builds/"+id+"/deploy", w.Token, nil)
	if r.Status != 202 {
		t.Fatalf("redeliver: %d %s", r.Status, r.Raw)
	}
	if b := w.WaitDeploy(t, id); b["autoDeployStatus"] != "succeeded" {
		t.Fatalf("after redelivery: %v", b)
	}
	if n := len(target.Got()); n != 1 {
		t.Fatalf("the new destination got %d requests", n)
	}
	failedBuild := w.AddSetting(t, pid, map[string]any{"branch": "no-such-branch"})["id"].(string)
	fid := w.Trigger(t, pid, failedBuild, "")
	w.WaitEnded(t, fid)
	e2e.WantError(t, w.Do(t, "POST", "/builds/"+fid+"/deploy", w.Token, nil), 409, "invalid_state")
}

func TestAutoDeployRefusesNonPublicAddresses(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.Serve) // no KILN_OUTBOUND_ALLOW: loopback is not allowed
	rc := e2e.NewReceiver(t, func(int) int { return 204 })
	pid := w.AddShooter(t)
	base := "/projects/" + pid + "/build-settings"
	setting := map[string]any{"platform": "Linux", "buildType": "Shipping", "ueVersion": "5.3", "trigger": "manual", "branch": "main", "autoDeploy": true}
	// Refused when saved: a literal address, and a name that resolves to loopback.
	for _, u := range []string{rc.URL, strings.Replace(rc.URL, "127.0.0.1", "localhost", 1), "http://10.0.0.7/upload", "http://169.254.169.254/upload"} {
		setting["uploadBuildUrl"] = u
		r := w.Do(t, "POST", base, w.Token, setting)
		e2e.WantError(t, r, 400, "validation_failed")
		if msg, _ := r.Body["fields"].(map[string]any)["uploadBuildUrl"].(string); !strings.Contains(msg, "KILN_OUTBOUND_ALLOW") {
			t.Errorf("%s: fields.uploadBuildUrl %q does not name KILN_OUTBOUND_ALLOW", u, msg)
		}
	}
	setting["uploadBuildUrl"] = "https://deploy.example/upload"
	sid := w.AddSetting(t, pid, setting)["id"].(string)
	r := w.Do(t, "PATCH", base+"/"+sid, w.Token, map[string]any{"uploadBuildUrl": rc.URL})
	e2e.WantError(t, r, 400, "validation_failed")
	if got := w.Do(t, "GET", base+"/"+sid, w.Token, nil); got.Body["uploadBuildUrl"] != "https://deploy.example/upload" {
		t.Fatalf("a refused PATCH changed the setting: %s", got.Raw)
	}

	// Checked again at delivery: saved while the operator allowed loopback, which no longer is.
	w.Restart(t, e2e.LoopbackAllowed)
	sid = w.AddSetting(t, pid, map[string]any{"autoDeploy": true, "uploadBuildUrl": rc.URL})["id"].(string)
	w.Restart(t, func(c *serve.Config) { c.OutboundAllow = nil })
	id := w.Trigger(t, pid, sid, "")
	b := w.WaitDeploy(t, id)
	if b["autoDeployStatus"] != "failed" || !strings.Contains(b["autoDeployError"].(string), "not allowed") || b["status"] != "complete" {
		t.Fatalf("delivery to loopback: %v", b)
	}
	if n := len(rc.Got()); n != 0 {
		t.Fatalf("the loopback receiver got %d requests", n)
	}
	// The service log has the precise cause, with the build and organization.
	var logged bool
	for _, line := range strings.Split(w.Logs.String(), "\n") {
		if strings.Contains(line, `"msg":"auto deploy attempt failed"`) && strings.Contains(line, `"build_id":"`+id+`"`) &&
			strings.Contains(line, `"org_id":"`+w.OrgID+`"`) && strings.Contains(line, `"cause":"not allowed: outbound: connecting to 127.0.0.1`) {
			logged = true
		}
	}
	if !logged {
		t.Errorf("no log line with the delivery's cause:\n%s", w.Logs.String())
	}
}

func TestAutoDeployResumesAfterRestart(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.Serve, e2e.LoopbackAllowed)
	rc := e2e.NewReceiver(t, func(int) int { return 204 })
	release := make(chan struct{})
	rc.Block = release
	pid := w.AddShooter(t)
	sid := w.AddSetting(t, pid, map[string]any{"autoDeploy": true, "uploadBuildUrl": rc.URL})["id"].(string)
	id := w.Trigger(t, pid, sid, "")
	w.WaitBuild(t, id, "delivering", func(b map[string]any) bool { return b["autoDeployStatus"] == "delivering" })
	done := make(chan struct{})
	go func() { w.Restart(t); close(done) }()
	time.Sleep(300 * time.Millisecond)
	close(release) // let the interrupted first request finish, answered or not
	<-done
	if b := w.WaitDeploy(t, id); b["autoDeployStatus"] != "succeeded" {
		t.Fatalf("after restart: %v", b)
	}
}
