package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// hostedBuild triggers a build of a new setting with fields, which must complete in kiln's
// hosted pool to a downloadable artifact of platform, claimed by one of kiln's EC2 hosts with
// its claim recorded; it returns the build's id and the instance's.
func (w *World) HostedBuild(t *testing.T, fields map[string]any, platform, pool string) (id, instance string) {
	t.Helper()
	pid := w.AddShooter(t)
	sid := w.AddSetting(t, pid, fields)["id"].(string)
	id = w.Trigger(t, pid, sid, "")
	b := w.WaitEnded(t, id)
	if b["status"] != "complete" {
		t.Fatalf("build ended %v: %v\nlog:\n%s", b["status"], b["failureReason"], w.LogText(t, id))
	}
	if b["agentPool"] != pool {
		t.Errorf("the build's pool: %v, want %s", b["agentPool"], pool)
	}
	d := w.Do(t, "GET", "/builds/"+id+"/download", w.Token, nil)
	if d.Status != 200 {
		t.Fatalf("download descriptor: %d %s", d.Status, d.Raw)
	}
	data := FetchArtifact(t, Field(t, d.Body, "url"))
	if int64(len(data)) != int64(d.Body["sizeBytes"].(float64)) || MD5Hex(data) != Field(t, d.Body, "checksumMd5") {
		t.Fatalf("artifact of %d bytes, md5 %s; descriptor %s", len(data), MD5Hex(data), d.Raw)
	}
	if names := TarEntries(t, data); !strings.Contains(names[0], platform) {
		t.Errorf("the %s artifact's top directory: %s", platform, names[0])
	}
	ctx := context.Background()
	st := w.AWS.Store()
	stored, err := st.GetBuild(ctx, w.OrgID, id)
	if err != nil {
		t.Fatal(err)
	}
	instance, ok := strings.CutPrefix(stored.Host, kiln.HostedHostPrefix)
	if !ok {
		t.Fatalf("the build's host is %q, want one of kiln's EC2 hosts", stored.Host)
	}
	if h, err := st.GetHostedHost(ctx, instance); err != nil || h.BuildID != id || h.OrganizationID != w.OrgID {
		t.Fatalf("the instance's claim record: %+v %v", h, err)
	}
	return id, instance
}
