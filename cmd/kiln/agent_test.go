package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/agentapi"
)

// TestAgentRunExitsByTheBuildsEnd: `kiln agent run` reports CODEBUILD_BUILD_ID with its
// credential, and exits 1 when the build fails (here: the job says it cannot run), 2 when it
// cannot work at all.
func TestAgentRunExitsByTheBuildsEnd(t *testing.T) {
	var gotAuth, gotRunID, gotReason string
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth = r.Header.Get("Authorization")
		switch r.URL.Path {
		case "/host/v1/start":
			var in agentapi.StartRequest
			_ = json.NewDecoder(r.Body).Decode(&in)
			gotRunID = in.HostRunID
			_ = json.NewEncoder(w).Encode(agentapi.Job{Build: agentapi.JobBuild{ID: "b1", OrganizationID: "k1"}, Failure: "the project was deleted before the build ran"})
		case "/host/v1/fail":
			var in agentapi.FailRequest
			_ = json.NewDecoder(r.Body).Decode(&in)
			gotReason = in.Reason
			_ = json.NewEncoder(w).Encode(agentapi.BuildStatus{Status: "failed", FailureReason: in.Reason})
		default:
			http.NotFound(w, r)
		}
	}))
	defer api.Close()
	env := map[string]string{
		"KILN_HOST_URL": api.URL, "KILN_HOST_CREDENTIAL": "kbh.k1.b1.secret", "CODEBUILD_BUILD_ID": "kiln-hosts:7",
		"KILN_HOST_WORKDIR": t.TempDir(),
	}
	var errOut bytes.Buffer
	err := run(context.Background(), []string{"agent", "run"}, func(k string) string { return env[k] }, &bytes.Buffer{}, &errOut)
	if exitCode(err) != 1 {
		t.Fatalf("exit %d (%v), want 1 for a failed build", exitCode(err), err)
	}
	if gotAuth != "Bearer kbh.k1.b1.secret" || gotRunID != "kiln-hosts:7" || gotReason != "the project was deleted before the build ran" {
		t.Errorf("auth %q, run id %q, reason %q", gotAuth, gotRunID, gotReason)
	}
	if strings.Contains(errOut.String(), "kbh.k1.b1.secret") {
		t.Error("the credential reached the host's output")
	}

	for name, e := range map[string]map[string]string{
		"no credential":    {"KILN_HOST_URL": api.URL},
		"unknown sandbox":  {"KILN_HOST_URL": api.URL, "KILN_HOST_CREDENTIAL": "x", "KILN_SANDBOX": "chroot"},
		"service refusing": {"KILN_HOST_URL": api.URL + "/nowhere", "KILN_HOST_CREDENTIAL": "x", "KILN_HOST_WORKDIR": t.TempDir()},
	} {
		err := run(context.Background(), []string{"agent", "run"}, func(k string) string { return e[k] }, &bytes.Buffer{}, &bytes.Buffer{})
		if exitCode(err) != 2 {
			t.Errorf("%s: exit %d (%v), want 2", name, exitCode(err), err)
		}
	}
}
