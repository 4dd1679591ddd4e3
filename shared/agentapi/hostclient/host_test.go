package hostclient_test

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/agentapi/hostclient"
	"github.com/kilnbuild/kiln/shared/buildlog"
	"github.com/kilnbuild/kiln/shared/github"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/manifest"
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
	// The size manifest went up through the same upload path, beside the artifact.
	mobj, err := s.artifacts.Open(ctx, manifest.Key(a.Key))
	if err != nil {
		t.Fatalf("manifest in MinIO: %v", err)
	}
	files, err := manifest.Read(mobj)
	mobj.Close()
	if err != nil || !slices.ContainsFunc(files, func(e manifest.Entry) bool {
		return e.Path == "Shooter/Content/Paks/Shooter-Linux.pak" && e.Size == 1<<20
	}) {
		t.Errorf("manifest %v (%v) lacks the 1 MiB pak", files, err)
	}
	lines, err := s.logs.Read(ctx, s.orgID, b.ID, 1, 10_000)
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for _, l := range lines {
		text.WriteString(l.Message + "\n")
	}
	if strings.Contains(text.String(), "no size report") {
		t.Errorf("the manifest upload failed:\n%s", text.String())
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

// TestHostRenewsAGitHubTokenAboutToExpire: a token that expires within minutes is replaced by
// asking for the job again before git uses it.
func TestHostRenewsAGitHubTokenAboutToExpire(t *testing.T) {
	s := newService(t)
	// GitHub and the App live 58 minutes behind the host: the tokens expire 2 minutes from its now.
	past := func() time.Time { return time.Now().Add(-58 * time.Minute) }
	s.gh.SetNow(past)
	app, err := github.New(github.Config{APIURL: s.gh.URL(), WebURL: s.gh.WebURL(), AppID: s.gh.AppID, PrivateKeyPEM: s.gh.PrivateKeyPEM,
		HTTPClient: s.gh.Client(), Now: past})
	if err != nil {
		t.Fatal(err)
	}
	s.server.GitHub = githubSource{app}
	b, cred := s.claimed(t, s.project, s.setting)
	status, err := s.host(t, cred, "").Run(t.Context())
	if err != nil || status != kiln.StatusComplete {
		dumpLog(t, s, b.ID)
		t.Fatalf("Run = %q, %v", status, err)
	}
	if n := s.starts.Load(); n != 2 {
		t.Errorf("%d calls of start, want 2: the job, and a new token before the clone", n)
	}
	if got := s.build(t, b.ID); got.Status != kiln.StatusComplete {
		t.Errorf("build %s", got.Status)
	}
}

func dumpLog(t *testing.T, s *service, id string) {
	lines, _ := s.logs.Read(t.Context(), s.orgID, id, 1, 1000)
	for _, l := range lines {
		t.Log(l.Message)
	}
}
