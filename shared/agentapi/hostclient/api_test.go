package hostclient_test

import (
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/agentapi"
	"github.com/kilnbuild/kiln/shared/agentapi/hostclient"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/manifest"
)

// TestHostCredentialsAreRefused: only the build's own credential works, and only while the
// build runs (a repeat of its result aside).
func TestHostCredentialsAreRefused(t *testing.T) {
	s := newService(t)
	ctx := t.Context()
	b, cred := s.claimed(t, s.project, s.setting)
	other, otherCred := s.claimed(t, s.project, s.setting)
	forged := "kbh." + s.orgID + "." + b.ID + "." + strings.Repeat("A", 43)
	wrongBuild := strings.Replace(otherCred, other.ID, b.ID, 1) // another build's secret naming b
	for _, tc := range []struct{ name, auth string }{
		{"none", ""},
		{"not bearer", "Basic " + cred},
		{"not a host credential", "Bearer kiln_abc"},
		{"forged secret", "Bearer " + forged},
		{"another build's secret", "Bearer " + wrongBuild},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := raw(t, s, http.MethodPost, "heartbeat", tc.auth, "{}")
			if status != http.StatusUnauthorized || body.Error != kiln.EInvalidToken || !strings.HasPrefix(body.RequestID, "req_") {
				t.Fatalf("status %d, body %+v; want 401 invalid_token", status, body)
			}
		})
	}
	// The other build's credential works for that build only: its heartbeat keeps it, not b.
	if status, _ := raw(t, s, http.MethodPost, "heartbeat", "Bearer "+otherCred, "{}"); status != http.StatusNoContent {
		t.Fatalf("own heartbeat: %d", status)
	}
	// Ended: every call is refused but a repeat of the result.
	if _, err := s.lifecycle.Fail(ctx, s.orgID, b.ID, "engine crashed"); err != nil {
		t.Fatal(err)
	}
	c := &hostclient.Client{BaseURL: s.api.URL, Credential: cred}
	for name, call := range map[string]func() error{
		"start":     func() error { _, err := c.Start(ctx, "x"); return err },
		"heartbeat": func() error { return c.Heartbeat(ctx) },
		"progress":  func() error { return c.Progress(ctx, agentapi.ProgressRequest{Commit: "abc"}) },
		"complete":  func() error { _, err := c.Complete(ctx, 10, strings.Repeat("a", 32)); return err },
		"fail":      func() error { _, err := c.Fail(ctx, "another reason"); return err },
	} {
		if err := call(); !kiln.IsCode(err, kiln.EInvalidState) {
			t.Errorf("%s on an ended build: %v, want invalid_state", name, err)
		}
	}
	if status, _ := raw(t, s, http.MethodPost, "logs", "Bearer "+cred, `{"first":1,"lines":[{"timestamp":"2026-01-01T00:00:00Z","level":"info","message":"late"}]}`); status != http.StatusConflict {
		t.Errorf("logs on an ended build: %d, want 409", status)
	}
	if st, err := c.Fail(ctx, "engine crashed"); err != nil || st.Status != string(kiln.StatusFailed) {
		t.Errorf("the same fail again: %+v, %v; want it answered as before", st, err)
	}
}

// TestHostUploadsOnlyItsOwnKey: the service chooses the key, and a part URL works for it only.
func TestHostUploadsOnlyItsOwnKey(t *testing.T) {
	s := newService(t)
	b, cred := s.claimed(t, s.project, s.setting)
	other, _ := s.claimed(t, s.project, s.setting)
	status, _ := rawJSON[agentapi.Upload](t, s, http.MethodPost, "artifact/uploads", cred, `{"key":"`+s.orgID+`/`+other.ID+`.tar.gz"}`)
	if status != http.StatusBadRequest {
		t.Fatalf("an upload naming its key: %d, want 400 (unknown field)", status)
	}
	status, up := rawJSON[agentapi.Upload](t, s, http.MethodPost, "artifact/uploads", cred, `{}`)
	if status != http.StatusCreated || up.Key != s.orgID+"/"+b.ID+".tar.gz" || up.UploadID == "" {
		t.Fatalf("upload: %d %+v", status, up)
	}
	status, part := rawJSON[agentapi.PartURL](t, s, http.MethodPost, "artifact/uploads/"+up.UploadID+"/parts/1", cred, `{}`)
	if status != http.StatusOK || !strings.Contains(part.URL, "/"+b.ID+".tar.gz") {
		t.Fatalf("part URL: %d %q", status, part.URL)
	}
	moved := strings.Replace(part.URL, "/"+b.ID+".tar.gz", "/"+other.ID+".tar.gz", 1)
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPut, moved, strings.NewReader("not yours"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("PUT to another build's key with the part URL: %d, want 403", resp.StatusCode)
	}
	if _, err := s.artifacts.Stat(t.Context(), s.orgID+"/"+other.ID+".tar.gz"); !kiln.IsCode(err, kiln.ENotFound) {
		t.Errorf("another build's key holds an object: %v", err)
	}
	if status, _ := raw(t, s, http.MethodDelete, "artifact/uploads/"+up.UploadID, "Bearer "+cred, ""); status != http.StatusNoContent {
		t.Errorf("abort: %d", status)
	}
}

func raw(t *testing.T, s *service, method, path, auth, body string) (int, agentapi.ErrorBody) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), method, s.api.URL+agentapi.PathPrefix+path, strings.NewReader(body))
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e agentapi.ErrorBody
	_ = json.NewDecoder(resp.Body).Decode(&e)
	return resp.StatusCode, e
}

func rawJSON[T any](t *testing.T, s *service, method, path, cred, body string) (int, T) {
	t.Helper()
	var out T
	req, _ := http.NewRequestWithContext(t.Context(), method, s.api.URL+agentapi.PathPrefix+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+cred)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// TestHostAPIRefusesBadReports: what a host sends is checked, and a refusal changes nothing.
func TestHostAPIRefusesBadReports(t *testing.T) {
	s := newService(t)
	s.server.MaxLogLines = 20
	b, cred := s.claimed(t, s.project, s.setting)
	auth := "Bearer " + cred
	line := func(level, msg string) string {
		return `{"timestamp":"2026-01-01T00:00:00Z","level":"` + level + `","message":"` + msg + `"}`
	}
	if status, body := raw(t, s, http.MethodPost, "start", auth, `{"hostRunId":"kiln-hosts:1"}`); status != http.StatusOK {
		t.Fatalf("start: %d %+v", status, body)
	}
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		code                     string
	}{
		{"another run id", "POST", "start", `{"hostRunId":"kiln-hosts:2"}`, 409, kiln.EConflict},
		{"a run id with spaces", "POST", "start", `{"hostRunId":"a b"}`, 400, kiln.EValidation},
		{"not JSON", "POST", "progress", `commit`, 400, kiln.EBadRequest},
		{"unknown field", "POST", "progress", `{"status":"complete"}`, 400, kiln.EBadRequest},
		{"an unknown cache state", "POST", "progress", `{"commit":"abc","cache":"tepid"}`, 400, kiln.EValidation},
		{"warm from no build", "POST", "progress", `{"commit":"abc","cache":"warm","cacheFrom":"../x"}`, 400, kiln.EValidation},
		{"cold without a reason", "POST", "progress", `{"commit":"abc","cache":"cold"}`, 400, kiln.EValidation},
		{"a cache upload on a service without caches", "POST", "artifact/uploads", `{"object":"cache"}`, 503, kiln.EServiceUnavailable},
		{"a cache on a service without caches", "GET", "cache", ``, 503, kiln.EServiceUnavailable},
		{"an unknown object", "POST", "artifact/uploads", `{"object":"secrets"}`, 400, kiln.EValidation},
		{"line 0", "POST", "logs", `{"first":0,"lines":[` + line("info", "x") + `]}`, 400, kiln.EValidation},
		{"unknown level", "POST", "logs", `{"first":1,"lines":[` + line("debug", "x") + `]}`, 400, kiln.EValidation},
		{"past the log's limit", "POST", "logs", `{"first":40,"lines":[` + line("info", "x") + `]}`, 413, kiln.EPayloadTooLarge},
		{"part 0", "POST", "artifact/uploads/abc/parts/0", `{}`, 400, kiln.EValidation},
		{"complete without an artifact", "POST", "complete", `{"size":10,"md5":"` + strings.Repeat("a", 32) + `"}`, 400, kiln.EValidation},
		{"complete with a bad md5", "POST", "complete", `{"size":10,"md5":"xyz"}`, 400, kiln.EValidation},
		{"fail without a reason", "POST", "fail", `{"reason":""}`, 400, kiln.EValidation},
		{"no such endpoint", "GET", "secrets", ``, 404, kiln.ENotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := raw(t, s, tc.method, tc.path, auth, tc.body)
			if status != tc.status || body.Error != tc.code || body.RequestID == "" {
				t.Fatalf("%d %+v; want %d %s", status, body, tc.status, tc.code)
			}
		})
	}
	got := s.build(t, b.ID)
	if got.Status != kiln.StatusRunning || got.Host != "codebuild:kiln-hosts:1" || got.Commit != "" || got.Cache != kiln.CacheNone {
		t.Errorf("after the refusals: %s host %q commit %q cache %q", got.Status, got.Host, got.Commit, got.Cache)
	}
	if last, _ := s.logs.Last(t.Context(), s.orgID, b.ID); last != 0 {
		t.Errorf("%d log lines written by refused calls", last)
	}
}

// TestCompleteAfterCancelDiscardsTheArtifact: a host that uploaded its artifact but completes
// after the build was cancelled is refused, and its artifact is removed.
func TestCompleteAfterCancelDiscardsTheArtifact(t *testing.T) {
	s := newService(t)
	ctx := t.Context()
	b, cred := s.claimed(t, s.project, s.setting)
	key := s.orgID + "/" + b.ID + ".tar.gz"
	store := hostclient.NewArtifactStore(&hostclient.Client{BaseURL: s.api.URL, Credential: cred}, 0)
	if err := store.Put(ctx, key, func(w io.Writer) error { _, err := io.WriteString(w, "artifact"); return err }); err != nil {
		t.Fatal(err)
	}
	if err := store.Put(ctx, manifest.Key(key), func(w io.Writer) error { return manifest.Write(w, nil) }); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.lifecycle.Cancel(ctx, s.orgID, b.ID); err != nil {
		t.Fatal(err)
	}
	sum := md5.Sum([]byte("artifact"))
	c := &hostclient.Client{BaseURL: s.api.URL, Credential: cred}
	if _, err := c.Complete(ctx, 8, hex.EncodeToString(sum[:])); !kiln.IsCode(err, kiln.EInvalidState) {
		t.Fatalf("complete after cancel: %v, want invalid_state", err)
	}
	if _, err := s.artifacts.Stat(ctx, key); !kiln.IsCode(err, kiln.ENotFound) {
		t.Errorf("the cancelled build's artifact is still stored: %v", err)
	}
	if _, err := s.artifacts.Stat(ctx, manifest.Key(key)); !kiln.IsCode(err, kiln.ENotFound) {
		t.Errorf("the cancelled build's manifest is still stored: %v", err)
	}
}
