package app

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// awsLocalHostedWin64Build (under TestOnAWSLocal): a Win64 build without an agent pool waits in
// kiln's hosted pool; the schedule's metric makes the scaling stand-in launch an "instance"
// (`kiln agent --ec2-host` with its own metadata service), whose agent claims the build with its
// signed identity document, runs it through the host API to a downloadable artifact, and is
// terminated by the schedule once the build ended. The instance's one claim is recorded.
func awsLocalHostedWin64Build(t *testing.T) {
	w := newWorld(t)
	if w.aws == nil {
		t.Skip("runs under TestOnAWSLocal only")
	}
	id, _ := w.hostedBuild(t, map[string]any{"platform": "Win64"}, "Win64", kiln.HostedPoolWin64)
	for deadline := time.Now().Add(60 * time.Second); w.aws.WindowsHostInstances() > 0; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the instance was not terminated after its build: %d alive", w.aws.WindowsHostInstances())
		}
	}
	if got := w.execution(t, id, true); got != "SUCCEEDED" {
		t.Errorf("the execution of the hosted build ended %s, want SUCCEEDED", got)
	}
}

// hostedBuild triggers a build of a new setting with fields, which must complete in kiln's
// hosted pool to a downloadable artifact of platform, claimed by one of kiln's EC2 hosts with
// its claim recorded; it returns the build's id and the instance's.
func (w *world) hostedBuild(t *testing.T, fields map[string]any, platform, pool string) (id, instance string) {
	t.Helper()
	pid := w.addShooter(t)
	sid := w.addSetting(t, pid, fields)["id"].(string)
	id = w.trigger(t, pid, sid, "")
	b := w.waitEnded(t, id)
	if b["status"] != "complete" {
		t.Fatalf("build ended %v: %v\nlog:\n%s", b["status"], b["failureReason"], w.logText(t, id))
	}
	if b["agentPool"] != pool {
		t.Errorf("the build's pool: %v, want %s", b["agentPool"], pool)
	}
	d := w.do(t, "GET", "/builds/"+id+"/download", w.token, nil)
	if d.Status != 200 {
		t.Fatalf("download descriptor: %d %s", d.Status, d.Raw)
	}
	data := fetchArtifact(t, field(t, d.Body, "url"))
	if int64(len(data)) != int64(d.Body["sizeBytes"].(float64)) || md5hex(data) != field(t, d.Body, "checksumMd5") {
		t.Fatalf("artifact of %d bytes, md5 %s; descriptor %s", len(data), md5hex(data), d.Raw)
	}
	if names := tarEntries(t, data); !strings.Contains(names[0], platform) {
		t.Errorf("the %s artifact's top directory: %s", platform, names[0])
	}
	ctx := context.Background()
	st := w.aws.Store()
	stored, err := st.GetBuild(ctx, w.orgID, id)
	if err != nil {
		t.Fatal(err)
	}
	instance, ok := strings.CutPrefix(stored.Host, kiln.HostedHostPrefix)
	if !ok {
		t.Fatalf("the build's host is %q, want one of kiln's EC2 hosts", stored.Host)
	}
	if h, err := st.GetHostedHost(ctx, instance); err != nil || h.BuildID != id || h.OrganizationID != w.orgID {
		t.Fatalf("the instance's claim record: %+v %v", h, err)
	}
	return id, instance
}
