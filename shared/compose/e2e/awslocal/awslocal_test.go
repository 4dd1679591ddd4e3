package awslocal

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
	"github.com/kilnbuild/kiln/shared/httpapi/openapi/openapitest"
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
		d := w.Do(t, "GET", "/builds/"+id+"/download", w.Token, nil)
		if d.Status != 200 {
			t.Fatalf("download descriptor: %d %s", d.Status, d.Raw)
		}
		client := openapitest.Client(t)
		client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		resp, err := client.Get(e2e.Field(t, d.Body, "url"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		location := resp.Header.Get("Location")
		if resp.StatusCode != http.StatusFound || !strings.HasPrefix(location, w.AWS.S3URL()+"/"+w.AWS.Bucket()+"/artifacts/"+w.OrgID+"/"+id+".tar.gz?") {
			t.Fatalf("signed URL: %d, Location %q; want 302 to a presigned GET of MinIO (through aws-local's IAM check)", resp.StatusCode, location)
		}
		resp, err = http.Get(location)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || int64(len(data)) != int64(d.Body["sizeBytes"].(float64)) || e2e.MD5Hex(data) != e2e.Field(t, d.Body, "checksumMd5") {
			t.Fatalf("presigned GET: %d, %d bytes, md5 %s; descriptor %s", resp.StatusCode, len(data), e2e.MD5Hex(data), d.Raw)
		}
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
