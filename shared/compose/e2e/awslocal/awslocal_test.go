package awslocal

import (
	"context"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

// TestDownloadRedirectsToMinIOAndARestartKeepsAll: on kiln aws-local, the build's host credential is in no
// execution data and its parameter is gone once it ended (checkCredentialKeptOutOfTheExecution);
// a build's artifact is in MinIO, its signed URL
// answers 302 to a presigned GET of MinIO that yields the artifact with the descriptor's MD5; and
// after a restart on the same KILN_DATA the owner's token, the build and its artifact are all
// still there, and a new build runs.
func TestDownloadRedirectsToMinIOAndARestartKeepsAll(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.AWSLocal, e2e.WithOwnBackends)
	pid := w.AddShooter(t)
	sid := w.AddSetting(t, pid, nil)["id"].(string)
	id := w.Trigger(t, pid, sid, "")
	if b := w.WaitEnded(t, id); b["status"] != "complete" {
		t.Fatalf("build ended %v: %v\nlog:\n%s", b["status"], b["failureReason"], w.LogText(t, id))
	}
	w.CheckCredentialKeptOutOfTheExecution(t, id)
	check := func() {
		t.Helper()
		// The signed URL answers 302 to a presigned GET of MinIO (through aws-local's IAM check).
		w.DownloadPresigned(t, id, w.AWS.S3URL()+"/"+w.AWS.Bucket()+"/artifacts/"+w.OrgID+"/"+id+".tar.gz?")
	}
	check()

	if err := w.AWS.Shutdown(context.Background()); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	token := w.Token
	again := e2e.StartService(t, e2e.AWSLocal, w.Config)
	if strings.Count(again.Out.String(), "kiln_") != 0 {
		t.Fatalf("a restart printed a new owner token:\n%s", again.Out.String())
	}
	again.Token = token
	w.Server = again
	check()
	if b := w.WaitEnded(t, w.Trigger(t, pid, sid, "")); b["status"] != "complete" {
		t.Fatalf("a build after the restart ended %v: %v", b["status"], b["failureReason"])
	}
}
