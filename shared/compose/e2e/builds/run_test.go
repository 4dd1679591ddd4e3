package builds

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
	"github.com/kilnbuild/kiln/shared/httpapi/openapi/openapitest"
)

func TestBuildRunsToADownloadableArtifact(t *testing.T) {
	e2e.Both(t, buildRunsToADownloadableArtifact)
}

func buildRunsToADownloadableArtifact(t *testing.T, dep e2e.Deployment) {
	w := e2e.NewWorld(t, dep)
	pid := w.AddShooter(t)
	sid := w.AddSetting(t, pid, nil)["id"].(string)
	head := w.Shooter.Commit("main", "Ship it", "Ada Lovelace", map[string]string{"Shooter/Source/Version.txt": "version-main-head\n"})
	id := w.Trigger(t, pid, sid, "")
	b := w.WaitEnded(t, id)
	if b["status"] != "complete" {
		t.Fatalf("build ended %v: %v\nlog:\n%s", b["status"], b["failureReason"], w.LogText(t, id))
	}
	if b["commit"] != head || b["commitMessage"] != "Ship it" || b["startedAt"] == nil || b["finishedAt"] == nil || b["durationMs"] == nil {
		t.Fatalf("complete build: %v", b)
	}
	lines := b["logLines"].([]any)
	if len(lines) == 0 || len(lines) > 200 {
		t.Fatalf("logLines: %d", len(lines))
	}
	levels := map[string]bool{}
	for _, l := range lines {
		levels[l.(map[string]any)["level"].(string)] = true
	}
	if !levels["info"] || !levels["warn"] {
		t.Errorf("log levels seen: %v", levels)
	}
	text := w.LogText(t, id)
	for _, want := range []string{"stage sync", "stage cook", "version-main-head"} {
		if !strings.Contains(text, want) {
			t.Errorf("log lacks %q:\n%s", want, text)
		}
	}

	d := w.Do(t, "GET", "/builds/"+id+"/download", w.Token, nil)
	if d.Status != 200 {
		t.Fatalf("download descriptor: %d %s", d.Status, d.Raw)
	}
	url := e2e.Field(t, d.Body, "url")
	data := e2e.FetchArtifact(t, url)
	if int64(len(data)) != int64(d.Body["sizeBytes"].(float64)) || e2e.MD5Hex(data) != e2e.Field(t, d.Body, "checksumMd5") {
		t.Fatalf("artifact of %d bytes, md5 %s; descriptor %s", len(data), e2e.MD5Hex(data), d.Raw)
	}
	names := e2e.TarEntries(t, data)
	top := strings.SplitN(names[0], "/", 2)[0]
	// The project's first build is #1, and its file is named like its top directory, numbered.
	if b["number"] != float64(1) || e2e.Field(t, d.Body, "fileName") != top+"-1.tar.gz" {
		t.Errorf("build number %v, file name %q; want 1, %s-1.tar.gz", b["number"], d.Body["fileName"], top)
	}
	want := map[string]bool{"/Shooter/Content/Paks/": false, "/Engine/": false, "/Shooter/Binaries/": false, "/Shooter/Plugins/": false}
	for _, n := range names {
		if !strings.HasPrefix(n, top+"/") && n != top+"/" && n != top {
			t.Fatalf("entry %s outside the single top-level directory %s", n, top)
		}
		for part := range want {
			if strings.Contains(n, part) {
				want[part] = true
			}
		}
	}
	for part, seen := range want {
		if !seen {
			t.Errorf("artifact lacks %s: %v", part, names)
		}
	}

	// Range requests are served; a tampered link is 403 with the envelope.
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Range", "bytes=10-19")
	resp, err := openapitest.Client(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	part, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusPartialContent || string(part) != string(data[10:20]) {
		t.Fatalf("range: %d %q", resp.StatusCode, part)
	}
	for _, bad := range []string{strings.Replace(url, "signature=", "signature=x", 1), strings.Replace(url, "expires=", "expires=1", 1)} {
		r := w.Do(t, "GET", strings.TrimPrefix(bad, w.URL()), "", nil)
		e2e.WantError(t, r, 403, "forbidden")
	}

	arts := e2e.Items(t, w.Do(t, "GET", "/projects/"+pid+"/artifacts", w.Token, nil))
	if len(arts) != 1 || arts[0]["buildId"] != id || arts[0]["commit"] != head || arts[0]["checksumMd5"] != e2e.MD5Hex(data) {
		t.Fatalf("artifacts: %v", arts)
	}
	list := e2e.Items(t, w.Do(t, "GET", "/projects", w.Token, nil))
	if list[0]["lastBuildStatus"] != "complete" || list[0]["lastBuildAt"] == nil {
		t.Fatalf("project list: %v", list[0])
	}
}

func TestCommitOverrideAndFailures(t *testing.T) { e2e.Both(t, commitOverrideAndFailures) }

func commitOverrideAndFailures(t *testing.T, dep e2e.Deployment) {
	w := e2e.NewWorld(t, dep)
	pid := w.AddShooter(t)
	sid := w.AddSetting(t, pid, nil)["id"].(string)
	old := w.Shooter.Commit("main", "Old version", "Ada Lovelace", map[string]string{"Shooter/Source/Version.txt": "version-old\n"})
	w.Shooter.Commit("main", "New version", "Ada Lovelace", map[string]string{"Shooter/Source/Version.txt": "version-new\n"})
	id := w.Trigger(t, pid, sid, fmt.Sprintf(`{"commit":%q}`, old))
	b := w.WaitEnded(t, id)
	if b["status"] != "complete" || b["commit"] != old || !strings.Contains(w.LogText(t, id), "version-old") {
		t.Fatalf("commit override: %v", b)
	}

	// The engine fails at cook: failed with a reason, error lines, no artifact.
	w.Shooter.Commit("broken", "Break the cook", "Ada Lovelace", map[string]string{"Shooter/FakeUAT.env": "FAKE_UAT_FAIL=cook\n"})
	broken := w.AddSetting(t, pid, map[string]any{"branch": "broken"})["id"].(string)
	id = w.Trigger(t, pid, broken, "")
	b = w.WaitEnded(t, id)
	reason, _ := b["failureReason"].(string)
	if b["status"] != "failed" || reason == "" {
		t.Fatalf("failing engine: %v", b)
	}
	hasError := false
	for _, l := range b["logLines"].([]any) {
		hasError = hasError || l.(map[string]any)["level"] == "error"
	}
	if !hasError {
		t.Errorf("no error-level line in %v", b["logLines"])
	}
	e2e.WantError(t, w.Do(t, "GET", "/builds/"+id+"/download", w.Token, nil), 404, "not_found")
	if list := e2e.Items(t, w.Do(t, "GET", "/projects", w.Token, nil)); list[0]["lastBuildStatus"] != "failed" {
		t.Errorf("project's last build: %v", list[0])
	}

	// A branch that does not exist fails at checkout.
	missing := w.AddSetting(t, pid, map[string]any{"branch": "no-such-branch"})["id"].(string)
	b = w.WaitEnded(t, w.Trigger(t, pid, missing, ""))
	if b["status"] != "failed" || !strings.Contains(fmt.Sprint(b["failureReason"]), "no-such-branch") {
		t.Fatalf("missing branch: %v", b)
	}

	// GitHub unlinked: builds fail with a reason that says so.
	w.Do(t, "DELETE", "/organizations/"+w.OrgID+"/integrations/github", w.Token, nil)
	b = w.WaitEnded(t, w.Trigger(t, pid, sid, ""))
	if b["status"] != "failed" || !strings.Contains(fmt.Sprint(b["failureReason"]), "GitHub is not connected") {
		t.Fatalf("unlinked: %v", b)
	}
}

func TestSupersedeCancelAndIdempotency(t *testing.T) { e2e.Both(t, supersedeCancelAndIdempotency) }

func supersedeCancelAndIdempotency(t *testing.T, dep e2e.Deployment) {
	w := e2e.NewWorld(t, dep)
	pid := w.AddShooter(t)
	w.Shooter.Commit("slow", "Slow build", "Ada Lovelace", map[string]string{"Shooter/FakeUAT.env": "FAKE_UAT_SLEEP=2\n"})
	slow := w.AddSetting(t, pid, map[string]any{"branch": "slow"})["id"].(string)

	first := w.Trigger(t, pid, slow, "")
	w.WaitStatus(t, first, "running")
	second := w.Trigger(t, pid, slow, "")
	third := w.Trigger(t, pid, slow, "")
	if b := w.WaitEnded(t, first); b["status"] != "superseded" || b["finishedAt"] == nil {
		t.Fatalf("running build not superseded: %v", b)
	}
	if b := w.WaitEnded(t, second); b["status"] != "superseded" {
		t.Fatalf("pending build not superseded: %v", b)
	}
	w.WaitStatus(t, third, "running")
	r := w.Do(t, "POST", "/builds/"+third+"/cancel", w.Token, nil)
	if r.Status != 200 || e2e.Field(t, r.Body, "status") != "failed" || e2e.Field(t, r.Body, "failureReason") != "cancelled" {
		t.Fatalf("cancel: %d %s", r.Status, r.Raw)
	}
	e2e.WantError(t, w.Do(t, "POST", "/builds/"+third+"/cancel", w.Token, nil), 409, "invalid_state")
	e2e.WantError(t, w.Do(t, "POST", "/builds/"+third+"/cancel", e2e.AddUser(t, w.Server, w.OrgID, "viewer"), nil), 403, "insufficient_scope")
	// A cancelled build stays failed: the stopped engine does not complete it afterwards.
	if b := w.WaitEnded(t, third); b["status"] != "failed" || b["failureReason"] != "cancelled" {
		t.Fatalf("after cancel: %v", b)
	}

	// Idempotency: the same key and body give the same build; another body is 422.
	fast := w.AddSetting(t, pid, nil)["id"].(string)
	path := "/projects/" + pid + "/build-settings/" + fast + "/trigger"
	send := func(key, body string) e2e.Response {
		req, _ := http.NewRequest("POST", w.URL()+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+w.Token)
		req.Header.Set("Idempotency-Key", key)
		return w.DoRequest(t, req)
	}
	a := send("deploy-42", `{"branch":"main"}`)
	again := send("deploy-42", `{"branch":"main"}`)
	if a.Status != 202 || again.Status != 202 || e2e.Field(t, a.Body, "buildId") != e2e.Field(t, again.Body, "buildId") {
		t.Fatalf("same key: %s / %s", a.Raw, again.Raw)
	}
	e2e.WantError(t, send("deploy-42", `{"branch":"dev"}`), 422, "idempotency_key_reused")
	if other := send("deploy-43", `{"branch":"main"}`); e2e.Field(t, other.Body, "buildId") == e2e.Field(t, a.Body, "buildId") {
		t.Fatal("another key gave the same build")
	}
}

func TestFollowingALogStreamsUntilTheBuildEnds(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.Serve)
	pid := w.AddShooter(t)
	w.Shooter.Commit("slow", "Slow build", "Ada Lovelace", map[string]string{"Shooter/FakeUAT.env": "FAKE_UAT_SLEEP=1\n"})
	sid := w.AddSetting(t, pid, map[string]any{"branch": "slow"})["id"].(string)
	id := w.Trigger(t, pid, sid, "")
	req, _ := http.NewRequest("GET", w.URL()+"/builds/"+id+"/logs?follow=1", nil)
	req.Header.Set("Authorization", "Bearer "+w.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Fatalf("follow: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	// The first lines arrive while the build still runs.
	buf := make([]byte, 4096)
	n, err := resp.Body.Read(buf)
	if err != nil || n == 0 {
		t.Fatalf("first read: %d %v", n, err)
	}
	b := w.Do(t, "GET", "/builds/"+id, w.Token, nil)
	if s := e2e.Field(t, b.Body, "status"); s != "running" && s != "pending" {
		t.Fatalf("the stream only started after the build ended (%s)", s)
	}
	rest, err := io.ReadAll(resp.Body) // ends when the build ends
	if err != nil {
		t.Fatal(err)
	}
	all := string(buf[:n]) + string(rest)
	if ended := w.WaitEnded(t, id); ended["status"] != "complete" {
		t.Fatalf("build: %v", ended)
	}
	if !strings.Contains(all, "stage sync") || !strings.Contains(all, "stage package") || all != w.LogText(t, id) {
		t.Fatalf("the followed log differs from the stored one:\n%s\n---\n%s", all, w.LogText(t, id))
	}
}
