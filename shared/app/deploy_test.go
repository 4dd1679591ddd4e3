package app

import (
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"
)

// receiver is a customer endpoint on loopback that records what it receives.
type receiver struct {
	*httptest.Server
	mu       sync.Mutex
	requests []received
	answer   func(n int) int // status for the n-th request (1-based)
	block    chan struct{}   // when set, the first request waits for it
}

type received struct {
	auth, contentType string
	length            int64
	chunked           bool
	parts             []string
	metadata          map[string]string
	filename          string
	artifactMD5       string
}

func newReceiver(t *testing.T, answer func(n int) int) *receiver {
	rc := &receiver{answer: answer}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc.mu.Lock()
		n := len(rc.requests) + 1
		block := rc.block
		rc.mu.Unlock()
		if n == 1 && block != nil {
			<-block
		}
		got := received{auth: r.Header.Get("Authorization"), contentType: r.Header.Get("Content-Type"),
			length: r.ContentLength, chunked: len(r.TransferEncoding) > 0}
		_, params, _ := mime.ParseMediaType(got.contentType)
		mr := multipart.NewReader(r.Body, params["boundary"])
		for {
			p, err := mr.NextPart()
			if err != nil {
				break
			}
			got.parts = append(got.parts, p.FormName()+":"+p.Header.Get("Content-Type"))
			switch p.FormName() {
			case "metadata":
				json.NewDecoder(p).Decode(&got.metadata)
			case "artifact":
				got.filename = p.FileName()
				h := md5.New()
				io.Copy(h, p)
				got.artifactMD5 = hex.EncodeToString(h.Sum(nil))
			}
		}
		rc.mu.Lock()
		rc.requests = append(rc.requests, got)
		rc.mu.Unlock()
		w.WriteHeader(rc.answer(n))
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) got() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.requests...)
}

func loopbackAllowed(c *Config) {
	c.OutboundAllow = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	c.DeliveryAttempts = 3
	c.DeliveryBackoff = 20 * time.Millisecond
}

func (w *world) waitDeploy(t *testing.T, id string) map[string]any {
	t.Helper()
	return w.waitBuild(t, id, "delivered", func(b map[string]any) bool {
		s := b["autoDeployStatus"]
		return s == "succeeded" || s == "failed"
	})
}

// deliveredBuild is a world whose receiver answers 204, and the complete build of a setting
// with auto deploy, delivered to it once.
func deliveredBuild(t *testing.T) (w *world, rc *receiver, id string) {
	t.Helper()
	w = newWorld(t, loopbackAllowed)
	rc = newReceiver(t, func(int) int { return http.StatusNoContent })
	pid := w.addShooter(t)
	sid := w.addSetting(t, pid, map[string]any{"autoDeploy": true, "uploadBuildUrl": rc.URL + "/upload"})["id"].(string)
	id = w.trigger(t, pid, sid, "")
	if b := w.waitDeploy(t, id); b["autoDeployStatus"] != "succeeded" {
		t.Fatalf("first delivery: %v", b)
	}
	return w, rc, id
}

func TestAutoDeployDeliversTheArtifact(t *testing.T) {
	w := newWorld(t, loopbackAllowed)
	rc := newReceiver(t, func(n int) int {
		if n == 1 {
			return http.StatusServiceUnavailable
		}
		return http.StatusNoContent
	})
	pid := w.addShooter(t)
	sid := w.addSetting(t, pid, map[string]any{"autoDeploy": true, "uploadBuildUrl": rc.URL + "/upload", "uploadBuildAuthHeader": "Bearer pixel-streaming-secret"})["id"].(string)
	id := w.trigger(t, pid, sid, "")
	b := w.waitDeploy(t, id)
	if b["status"] != "complete" || b["autoDeployStatus"] != "succeeded" || b["autoDeployAttempts"] != float64(2) || b["autoDeployError"] != nil {
		t.Fatalf("after delivery: %v", b)
	}
	d := w.do(t, "GET", "/builds/"+id+"/download", w.token, nil)
	reqs := rc.got()
	if len(reqs) != 2 {
		t.Fatalf("receiver got %d requests", len(reqs))
	}
	got := reqs[1]
	if got.auth != "Bearer pixel-streaming-secret" || got.chunked || got.length <= 0 || !strings.HasPrefix(got.contentType, "multipart/form-data") {
		t.Errorf("request: %+v", got)
	}
	if strings.Join(got.parts, ",") != "metadata:application/json,artifact:application/gzip" || got.filename != id+".tar.gz" {
		t.Errorf("parts %v, filename %q", got.parts, got.filename)
	}
	m := got.metadata
	if m["buildId"] != id || m["projectId"] != pid || m["platform"] != "Linux" || m["buildType"] != "Shipping" || m["ueVersion"] != "5.3" || m["branch"] != "main" || m["commit"] != b["commit"] {
		t.Errorf("metadata %v", m)
	}
	if got.artifactMD5 != field(t, d.Body, "checksumMd5") {
		t.Errorf("received artifact md5 %s, artifact %s", got.artifactMD5, field(t, d.Body, "checksumMd5"))
	}
}

func TestAutoDeployFailuresLeaveTheBuildComplete(t *testing.T) {
	w := newWorld(t, loopbackAllowed)
	pid := w.addShooter(t)
	always500 := newReceiver(t, func(int) int { return 500 })
	target := newReceiver(t, func(int) int { return 204 })
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
			sid := w.addSetting(t, pid, map[string]any{"autoDeploy": true, "uploadBuildUrl": c.url, "branch": "dev"})["id"].(string)
			id := w.trigger(t, pid, sid, "")
			b := w.waitDeploy(t, id)
			if b["status"] != "complete" || b["autoDeployStatus"] != "failed" || !strings.Contains(b["autoDeployError"].(string), c.wantErr) || b["autoDeployAttempts"] != c.attempts {
				t.Fatalf("after delivery: %v", b)
			}
			d := w.do(t, "GET", "/builds/"+id+"/download", w.token, nil)
			if d.Status != 200 || len(fetchArtifact(t, field(t, d.Body, "url"))) == 0 {
				t.Fatalf("not downloadable after a failed delivery: %d", d.Status)
			}
		})
	}
	if n := len(target.got()); n != 0 {
		t.Fatalf("the redirect target received %d requests", n)
	}
	// Redeliver the failed one to a working destination.
	sid := w.addSetting(t, pid, map[string]any{"autoDeploy": true, "uploadBuildUrl": always500.URL, "branch": "main"})["id"].(string)
	id := w.trigger(t, pid, sid, "")
	w.waitDeploy(t, id)
	w.do(t, "PATCH", "/projects/"+pid+"/build-settings/"+sid, w.token, map[string]any{"uploadBuildUrl": target.URL})
	r := w.do(t, "POST", "/builds/"+id+"/deploy", w.token, nil)
	if r.Status != 202 {
		t.Fatalf("redeliver: %d %s", r.Status, r.Raw)
	}
	if b := w.waitDeploy(t, id); b["autoDeployStatus"] != "succeeded" {
		t.Fatalf("after redelivery: %v", b)
	}
	if n := len(target.got()); n != 1 {
		t.Fatalf("the new destination got %d requests", n)
	}
	failedBuild := w.addSetting(t, pid, map[string]any{"branch": "no-such-branch"})["id"].(string)
	fid := w.trigger(t, pid, failedBuild, "")
	w.waitEnded(t, fid)
	wantError(t, w.do(t, "POST", "/builds/"+fid+"/deploy", w.token, nil), 409, "invalid_state")
}

func TestAutoDeployRefusesNonPublicAddresses(t *testing.T) {
	w := newWorld(t) // no KILN_OUTBOUND_ALLOW: loopback is not allowed
	rc := newReceiver(t, func(int) int { return 204 })
	pid := w.addShooter(t)
	base := "/projects/" + pid + "/build-settings"
	setting := map[string]any{"platform": "Linux", "buildType": "Shipping", "ueVersion": "5.3", "trigger": "manual", "branch": "main", "autoDeploy": true}
	// Refused when saved: a literal address, and a name that resolves to loopback.
	for _, u := range []string{rc.URL, strings.Replace(rc.URL, "127.0.0.1", "localhost", 1), "http://10.0.0.7/upload", "http://169.254.169.254/upload"} {
		setting["uploadBuildUrl"] = u
		r := w.do(t, "POST", base, w.token, setting)
		wantError(t, r, 400, "validation_failed")
		if msg, _ := r.Body["fields"].(map[string]any)["uploadBuildUrl"].(string); !strings.Contains(msg, "KILN_OUTBOUND_ALLOW") {
			t.Errorf("%s: fields.uploadBuildUrl %q does not name KILN_OUTBOUND_ALLOW", u, msg)
		}
	}
	setting["uploadBuildUrl"] = "https://deploy.example/upload"
	sid := w.addSetting(t, pid, setting)["id"].(string)
	r := w.do(t, "PATCH", base+"/"+sid, w.token, map[string]any{"uploadBuildUrl": rc.URL})
	wantError(t, r, 400, "validation_failed")
	if got := w.do(t, "GET", base+"/"+sid, w.token, nil); got.Body["uploadBuildUrl"] != "https://deploy.example/upload" {
		t.Fatalf("a refused PATCH changed the setting: %s", got.Raw)
	}

	// Checked again at delivery: saved while the operator allowed loopback, which no longer is.
	w.restart(t, loopbackAllowed)
	sid = w.addSetting(t, pid, map[string]any{"autoDeploy": true, "uploadBuildUrl": rc.URL})["id"].(string)
	w.restart(t, func(c *Config) { c.OutboundAllow = nil })
	id := w.trigger(t, pid, sid, "")
	b := w.waitDeploy(t, id)
	if b["autoDeployStatus"] != "failed" || !strings.Contains(b["autoDeployError"].(string), "not allowed") || b["status"] != "complete" {
		t.Fatalf("delivery to loopback: %v", b)
	}
	if n := len(rc.got()); n != 0 {
		t.Fatalf("the loopback receiver got %d requests", n)
	}
	// The service log has the precise cause, with the build and organization.
	var logged bool
	for _, line := range strings.Split(w.logs.String(), "\n") {
		if strings.Contains(line, `"msg":"auto deploy attempt failed"`) && strings.Contains(line, `"build_id":"`+id+`"`) &&
			strings.Contains(line, `"org_id":"`+w.orgID+`"`) && strings.Contains(line, `"cause":"not allowed: outbound: connecting to 127.0.0.1`) {
			logged = true
		}
	}
	if !logged {
		t.Errorf("no log line with the delivery's cause:\n%s", w.logs.String())
	}
}

func TestAutoDeployResumesAfterRestart(t *testing.T) {
	w := newWorld(t, loopbackAllowed)
	rc := newReceiver(t, func(int) int { return 204 })
	release := make(chan struct{})
	rc.block = release
	pid := w.addShooter(t)
	sid := w.addSetting(t, pid, map[string]any{"autoDeploy": true, "uploadBuildUrl": rc.URL})["id"].(string)
	id := w.trigger(t, pid, sid, "")
	w.waitBuild(t, id, "delivering", func(b map[string]any) bool { return b["autoDeployStatus"] == "delivering" })
	done := make(chan struct{})
	go func() { w.restart(t); close(done) }()
	time.Sleep(300 * time.Millisecond)
	close(release) // let the interrupted first request finish, answered or not
	<-done
	if b := w.waitDeploy(t, id); b["autoDeployStatus"] != "succeeded" {
		t.Fatalf("after restart: %v", b)
	}
}
