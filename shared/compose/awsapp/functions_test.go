package awsapp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/kilnbuild/kiln/shared/agentapi"
	"github.com/kilnbuild/kiln/shared/buildlog"
	"github.com/kilnbuild/kiln/shared/hostcred"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/storefixture"
	"github.com/kilnbuild/kiln/shared/workflow/sfn"
)

// TestWorkflowSampleEvents decodes every task and ended event in events/ strictly into the type
// its handler takes, invokes the handler as Lambda does (lambda.NewHandler(...).Invoke) on a
// build in a real store, and checks what it did to the build.
func TestWorkflowSampleEvents(t *testing.T) {
	params := hostParams{}
	tests := map[string]struct {
		status kiln.BuildStatus // of the build before the event
		check  func(t *testing.T, out []byte, b *kiln.Build)
	}{
		"task-claim.json": {kiln.StatusPending, func(t *testing.T, out []byte, b *kiln.Build) {
			var claim sfn.ClaimOutput
			if err := json.Unmarshal(out, &claim); err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(claim.CredentialParameter, "/Kiln/hosts/"+b.ID+"/") {
				t.Errorf("claim answered the parameter %q, want one under /Kiln/hosts/%s/", claim.CredentialParameter, b.ID)
			}
			env := map[string]string{agentapi.EnvHostURL: claim.HostURL, agentapi.EnvHostCredential: params[claim.CredentialParameter], agentapi.EnvBuildID: claim.BuildID}
			if claim.Kind != sfn.HostCodeBuild || claim.Image != "kiln-engine:5.3" || claim.TimeoutMinutes != 4*60+61 || // the 4 h limit and HostStartGrace (60.5 min), rounded up
				env[agentapi.EnvHostURL] != "https://kiln.example" || env[agentapi.EnvBuildID] != b.ID {
				t.Errorf("claim answered %s", out)
			}
			// Reserved for its host, the build waits pending until the host starts it.
			if b.Status != kiln.StatusPending || b.StartedAt != nil || b.Host != sfn.HostCodeBuild || !hostcred.Matches(env[agentapi.EnvHostCredential], b.HostCredentialHash) {
				t.Errorf("after the claim the build is %s on %q, its credential matching: %v", b.Status, b.Host, hostcred.Matches(env[agentapi.EnvHostCredential], b.HostCredentialHash))
			}
		}},
		"task-finish-host-lost.json":   {kiln.StatusRunning, wantFailed("host lost: its CodeBuild build ended FAILED")},
		"task-finish-timeout.json":     {kiln.StatusRunning, wantFailed("time limit")},
		"task-finish-host-silent.json": {kiln.StatusRunning, wantFailed(sfn.ReasonHostSilent)},
		"task-unsupported.json":        {kiln.StatusPending, wantFailed(sfn.ReasonWin64)},
		"ended-aborted.json":           {kiln.StatusRunning, wantFailed("the build's workflow ended ABORTED before the build did")},
		"ended-succeeded.json": {kiln.StatusRunning, func(t *testing.T, out []byte, b *kiln.Build) {
			if b.Status != kiln.StatusRunning {
				t.Errorf("a succeeded execution changed the build to %s", b.Status)
			}
		}},
	}
	files, _ := filepath.Glob("../../../events/*.json")
	seen := 0
	for _, f := range files {
		name := filepath.Base(f)
		if !strings.HasPrefix(name, "task-") && !strings.HasPrefix(name, "ended-") {
			continue
		}
		seen++
		tt, ok := tests[name]
		if !ok {
			t.Errorf("events/%s: the test does not know it: add it here", name)
			continue
		}
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			st := storefixture.SQLite(t)
			now := time.Now().UTC().Truncate(time.Millisecond)
			org, _ := storefixture.Org(t, st, "", now)
			b := storefixture.Build(t, st, org.ID, tt.status, now, func(b *kiln.Build) {
				if b.Status == kiln.StatusRunning {
					b.Host = sfn.HostCodeBuild
				}
			})
			logs, err := buildlog.NewFiles(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			// As in AWS: the workflow's functions have no master key (mail is on, to show that
			// ending builds does not need it).
			fns, err := newFunctions(AWSConfig{PublicURL: "https://kiln.example", SMTPURL: "smtp://127.0.0.1:1", SMTPFrom: "kiln <kiln@example.com>",
				Workflow: WorkflowConfig{HostImages: map[string]string{"5.3": "kiln-engine:5.3"}, BuildTimeLimit: 4 * time.Hour, HostCredentialPath: "/Kiln/hosts"}},
				st, logs, nil, nil, params, slog.New(slog.NewTextHandler(io.Discard, nil)), LiveParts{})
			if err != nil {
				t.Fatal(err)
			}
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			raw = bytes.ReplaceAll(raw, []byte("ORGANIZATIONIDREPLACEDBYTEST"), []byte(b.OrganizationID))
			raw = bytes.ReplaceAll(raw, []byte("BUILDIDREPLACEDBYTEST"), []byte(b.ID))
			var handler lambda.Handler
			if strings.HasPrefix(name, "task-") {
				strict[sfn.TaskInput](t, raw)
				handler = lambda.NewHandler(fns.Task.Handle)
			} else {
				strict[events.CloudWatchEvent](t, raw)
				handler = lambda.NewHandler(fns.Ended.Handle)
			}
			out, err := handler.Invoke(ctx, raw)
			if err != nil {
				t.Fatal(err)
			}
			got, err := st.GetBuild(ctx, b.OrganizationID, b.ID)
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, out, got)
		})
	}
	if seen != len(tests) {
		t.Errorf("events/ holds %d task and ended events, the test knows %d", seen, len(tests))
	}
}

// hostParams is an sfn.HostCredentials in memory.
type hostParams map[string]string

func (p hostParams) Put(_ context.Context, name, value string) error { p[name] = value; return nil }
func (p hostParams) Delete(_ context.Context, name string) error     { delete(p, name); return nil }

// strict decodes raw into T refusing unknown fields: the sample is exactly the handler's input.
func strict[T any](t *testing.T, raw []byte) {
	t.Helper()
	var v T
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("the sample is not a %T: %v", v, err)
	}
}

func wantFailed(reason string) func(t *testing.T, out []byte, b *kiln.Build) {
	return func(t *testing.T, out []byte, b *kiln.Build) {
		t.Helper()
		if b.Status != kiln.StatusFailed || b.FailureReason != reason {
			t.Errorf("build is %s (%q), want failed (%q)", b.Status, b.FailureReason, reason)
		}
	}
}
