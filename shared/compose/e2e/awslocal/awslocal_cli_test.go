package awslocal

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

// TestCLITriggerFollowAndDownload: the kiln command, as a CI job runs it (KILN_URL and KILN_TOKEN), drives a build on
// kiln aws-local as on AWS: trigger --follow streams the log and exits 0 when the build
// completes, builds list shows it, and artifacts download fetches the artifact through its
// presigned S3 URL, checked against the MD5 the API gives.
func TestCLITriggerFollowAndDownload(t *testing.T) {
	t.Parallel()
	w := e2e.NewWorld(t, e2e.AWSLocal)
	pid := w.AddShooter(t)
	sid := w.AddSetting(t, pid, nil)["id"].(string)
	dir := t.TempDir()
	kiln := func(args ...string) (string, error) {
		t.Helper()
		cmd := exec.Command(e2e.KilnBinary(t), args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "KILN_URL="+w.URL(), "KILN_TOKEN="+w.Token, "HOME="+dir, "XDG_CONFIG_HOME="+dir)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		if err != nil {
			t.Logf("kiln %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
		}
		return out.String(), err
	}

	out, err := kiln("builds", "trigger", pid, sid, "--follow", "--json")
	if err != nil {
		t.Fatalf("trigger --follow: %v\n%s", err, out)
	}
	var first struct {
		BuildID string `json:"buildId"`
	}
	if err := json.NewDecoder(strings.NewReader(out)).Decode(&first); err != nil || first.BuildID == "" || !strings.Contains(out, "BuildCookRun") {
		t.Fatalf("trigger --follow printed %q (%v); want the build's id, then its log", out, err)
	}
	listed, err := kiln("builds", "list", "--setting", sid, "--status", "complete", "--json")
	if err != nil || !strings.Contains(listed, `"id":"`+first.BuildID+`"`) {
		t.Fatalf("builds list: %v\n%s", err, listed)
	}
	if _, err := kiln("artifacts", "download", first.BuildID, "-o", "game.tar.gz"); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "game.tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := md5.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	d := w.Do(t, "GET", "/builds/"+first.BuildID+"/download", w.Token, nil)
	if got := hex.EncodeToString(h.Sum(nil)); d.Status != 200 || got != e2e.Field(t, d.Body, "checksumMd5") {
		t.Fatalf("downloaded MD5 %s; descriptor %d %s", got, d.Status, d.Raw)
	}
}
