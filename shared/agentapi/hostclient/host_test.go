package hostclient_test

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/agentapi"
	"github.com/kilnbuild/kiln/shared/agentapi/hostclient"
	"github.com/kilnbuild/kiln/shared/buildlog"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// TestRemoteHostRunsABuildToCompletion: the runner on a remote host, talking only to the host
// API with its credential, checks out, builds with the stand-in engine and uploads the artifact
// in parts to MinIO; the service completes the build with the artifact, the log holds the
// host's lines and the build names the CodeBuild build that ran it.
func TestRemoteHostRunsABuildToCompletion(t *testing.T) {
	s := newService(t)
	ctx := t.Context()
	b, cred := s.claimed(t, s.project, s.setting)
	status, err := s.host(t, cred, "kiln-hosts:run-1").Run(ctx)
	if err != nil || status != kiln.StatusComplete {
		t.Fatalf("Run = %q, %v; want complete", status, err)
	}
	got := s.build(t, b.ID)
	if got.Status != kiln.StatusComplete || got.Host != "codebuild:kiln-hosts:run-1" || len(got.Commit) != 40 {
		t.Fatalf("build: status %s, host %q, commit %q", got.Status, got.Host, got.Commit)
	}
	a, err := s.store.GetArtifact(ctx, s.orgID, b.ID)
	if err != nil {
		t.Fatal(err)
	}
	if a.Key != s.orgID+"/"+b.ID+".tar.gz" {
		t.Errorf("artifact key %q", a.Key)
	}
	obj, err := s.artifacts.Open(ctx, a.Key)
	if err != nil {
		t.Fatal(err)
	}
	h := md5.New()
	n, err := io.Copy(h, obj)
	obj.Close()
	if err != nil || n != a.SizeBytes || hex.EncodeToString(h.Sum(nil)) != a.ChecksumMD5 || n == 0 {
		t.Errorf("object in MinIO: %d bytes, MD5 %x; record says %d bytes, MD5 %s (err %v)", n, h.Sum(nil), a.SizeBytes, a.ChecksumMD5, err)
	}
	lines, err := s.logs.Read(ctx, s.orgID, b.ID, 1, 10_000)
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for _, l := range lines {
		text.WriteString(l.Message + "\n")
	}
	for _, want := range []string{"==> kiln: stage sync", "==> kiln: stage compile", "==> kiln: stage upload", "Stored the artifact"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the log lacks %q:\n%s", want, text.String())
		}
	}
	if strings.Contains(text.String(), cred) || strings.Contains(text.String(), "ghs_") {
		t.Error("a credential reached the build log")
	}
	// Done: the credential opens nothing more, but repeating the result answers as before.
	c := &hostclient.Client{BaseURL: s.api.URL, Credential: cred}
	if err := c.Heartbeat(ctx); !kiln.IsCode(err, kiln.EInvalidState) {
		t.Errorf("heartbeat after the end: %v, want invalid_state", err)
	}
	if st, err := c.Complete(ctx, a.SizeBytes, a.ChecksumMD5); err != nil || st.Status != string(kiln.StatusComplete) {
		t.Errorf("complete again: %+v, %v", st, err)
	}
}

// TestRemoteBuildFailureEndsTheLog: a build the engine fails is failed through the host API,
// with the reason as the log's last line, and the host reports it failed.
func TestRemoteBuildFailureEndsTheLog(t *testing.T) {
	s := newService(t)
	p, st := s.addProject(t, "studio/shooter", "Missing/Missing.uproject")
	b, cred := s.claimed(t, p, st)
	status, err := s.host(t, cred, "").Run(t.Context())
	if err != nil || status != kiln.StatusFailed {
		t.Fatalf("Run = %q, %v; want failed", status, err)
	}
	got := s.build(t, b.ID)
	if got.Status != kiln.StatusFailed || got.FailureReason == "" || got.Host != "codebuild" {
		t.Fatalf("build: %s %q host %q", got.Status, got.FailureReason, got.Host)
	}
	endsWithOnce(t, s, b.ID, "kiln: build failed: "+got.FailureReason)
}

// endsWithOnce checks that a build's log ends with line, which it holds once.
func endsWithOnce(t *testing.T, s *service, buildID, line string) {
	t.Helper()
	lines, err := s.logs.Read(t.Context(), s.orgID, buildID, 1, 100_000)
	if err != nil || len(lines) == 0 {
		t.Fatalf("log: %d lines, %v", len(lines), err)
	}
	n := 0
	for _, l := range lines {
		if l.Message == line {
			n++
		}
	}
	if last := lines[len(lines)-1].Message; last != line || n != 1 {
		t.Fatalf("the log ends with %q and holds %q %d times; want it once, last", last, line, n)
	}
}

// TestCancelStopsTheRemoteHost: once the build is cancelled the next heartbeat is refused and
// the host stops its engine and returns ErrEnded, reporting nothing more.
func TestCancelStopsTheRemoteHost(t *testing.T) {
	s := newService(t)
	p, st := s.addProject(t, "studio/slow", "Slow/Slow.uproject")
	b, cred := s.claimed(t, p, st)
	done := make(chan error, 1)
	go func() {
		_, err := s.host(t, cred, "kiln-hosts:run-2").Run(context.Background())
		done <- err
	}()
	// Wait until the engine runs (its stage is in the log), then cancel.
	for {
		lines, _ := s.logs.Read(t.Context(), s.orgID, b.ID, 1, 10_000)
		if hasLine(lines, "==> kiln: stage compile") {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("the host ended before the cancel: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
	}
	if _, _, err := s.lifecycle.Cancel(t.Context(), s.orgID, b.ID); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, hostclient.ErrEnded) {
		t.Fatalf("Run = %v, want ErrEnded", err)
	}
	if got := s.build(t, b.ID); got.Status != kiln.StatusFailed || got.FailureReason != "cancelled" {
		t.Errorf("build %s %q, want failed: cancelled", got.Status, got.FailureReason)
	}
	if _, err := s.store.GetArtifact(t.Context(), s.orgID, b.ID); !kiln.IsCode(err, kiln.ENotFound) {
		t.Errorf("a cancelled build has an artifact: %v", err)
	}
	endsWithOnce(t, s, b.ID, "kiln: build failed: cancelled")
}

func hasLine(lines []buildlog.Line, want string) bool {
	for _, l := range lines {
		if l.Message == want {
			return true
		}
	}
	return false
}

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
