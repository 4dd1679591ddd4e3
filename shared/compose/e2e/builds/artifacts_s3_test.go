package builds

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/kilnbuild/kiln/shared/awslocal/minio/miniotest"
	"github.com/kilnbuild/kiln/shared/compose/e2e"
	"github.com/kilnbuild/kiln/shared/compose/serve"
)

// kiln serve with KILN_ARTIFACTS=s3://... on a MinIO server: a build's artifact is uploaded to
// the bucket (nothing under KILN_DATA/artifacts), its signed URL answers 302 to a presigned GET
// that yields the artifact with the descriptor's MD5, and retention deletes the object and keeps
// the build.
func TestArtifactsInS3(t *testing.T) {
	minio, err := miniotest.Start()
	if err != nil {
		t.Fatalf("start MinIO: %v", err)
	}
	t.Cleanup(minio.Stop)
	for k, v := range minio.Env() {
		t.Setenv(k, v)
	}
	if err := minio.CreateBucket(t.Context(), "studio-artifacts"); err != nil {
		t.Fatal(err)
	}
	// A bucket that does not exist stops kiln serve at start, saying why.
	cfg := e2e.NewConfig(t, t.TempDir())
	cfg.Artifacts = "s3://no-such-bucket"
	if svc, err := serve.Start(t.Context(), cfg, io.Discard, slog.New(slog.DiscardHandler)); err == nil || !strings.Contains(err.Error(), "KILN_ARTIFACTS") {
		if svc != nil {
			_ = svc.Shutdown(t.Context())
		}
		t.Fatalf("start with a missing bucket: %v, want an error naming KILN_ARTIFACTS", err)
	}
	w := e2e.NewWorld(t, e2e.Serve, func(c *serve.Config) { c.Artifacts = "s3://studio-artifacts/kiln" })
	pid := w.AddShooter(t)
	sid := w.AddSetting(t, pid, nil)["id"].(string)
	id := w.Trigger(t, pid, sid, "")
	if b := w.WaitEnded(t, id); b["status"] != "complete" {
		t.Fatalf("build ended %v: %v\nlog:\n%s\nservice log:\n%s", b["status"], b["failureReason"], w.LogText(t, id), w.Logs.String())
	}
	// listed lists the artifacts' objects; caches, the build caches'.
	var caches []string
	listed := func() []string {
		out, err := minio.Client().ListObjectsV2(t.Context(), &s3.ListObjectsV2Input{Bucket: aws.String("studio-artifacts")})
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		caches = nil
		for _, o := range out.Contents {
			if key := aws.ToString(o.Key); strings.HasPrefix(key, "kiln/caches/") {
				caches = append(caches, key)
			} else {
				keys = append(keys, key)
			}
		}
		return keys
	}
	// The artifact and its size manifest (listed in key order), and the build cache the build
	// saved, in the same bucket under caches/.
	keys := listed()
	if len(caches) != 1 || !strings.HasPrefix(caches[0], "kiln/caches/"+w.OrgID+"/") || !strings.HasSuffix(caches[0], "/"+id+".tar.zst") {
		t.Errorf("build caches in the bucket: %v, want the one build %s saved", caches, id)
	}
	if len(keys) != 2 || keys[0] != "kiln/"+w.OrgID+"/"+id+".manifest.json.gz" || keys[1] != "kiln/"+w.OrgID+"/"+id+".tar.gz" {
		t.Fatalf("objects in the bucket: %v, want kiln/%s/%s.tar.gz and its .manifest.json.gz", keys, w.OrgID, id)
	}
	if files, _ := os.ReadDir(filepath.Join(w.Config.Data, "artifacts")); len(files) != 0 {
		t.Errorf("files under KILN_DATA/artifacts: %v", files)
	}

	got := w.DownloadPresigned(t, id, minio.Endpoint+"/studio-artifacts/kiln/")
	if !strings.Contains(got.Location, "X-Amz-Expires=900&") || !strings.Contains(got.Location, "response-content-disposition=") {
		t.Fatalf("signed URL's Location %q; want a presigned GET valid 15 minutes that names the file", got.Location)
	}
	// The presigned GET names the file after the project, platform, build type and number.
	name := e2e.Field(t, got.Descriptor.Body, "fileName")
	if !strings.HasPrefix(name, "Shooter-") || !strings.HasSuffix(name, "-1.tar.gz") {
		t.Fatalf("download descriptor's fileName %q, want Shooter-<platform>-<type>-1.tar.gz", name)
	}
	if got.Header.Get("Content-Disposition") != `attachment; filename="`+name+`"` {
		t.Fatalf("presigned GET's Content-Disposition %q", got.Header.Get("Content-Disposition"))
	}
	if names := e2e.TarEntries(t, got.Data); len(names) == 0 {
		t.Fatal("empty archive")
	}

	// Retention, a month later: the object goes, the build stays, the download is 404.
	janitor := w.Service.RetentionJanitor()
	janitor.Now = func() time.Time { return time.Now().Add(w.Config.ArtifactRetention + time.Hour) }
	if n, err := janitor.Sweep(t.Context()); err != nil || n != 1 {
		t.Fatalf("retention sweep: %d deleted, %v", n, err)
	}
	if keys := listed(); len(keys) != 0 {
		t.Errorf("objects after retention: %v", keys)
	}
	if len(caches) != 1 { // a live project's cache goes by the cap, a newer save or its project's deletion
		t.Errorf("build caches after retention: %v", caches)
	}
	if b := w.Do(t, "GET", "/builds/"+id, w.Token, nil); b.Status != 200 || b.Body["status"] != "complete" {
		t.Errorf("build after retention: %d %s", b.Status, b.Raw)
	}
	e2e.WantError(t, w.Do(t, "GET", "/builds/"+id+"/download", w.Token, nil), 404, "not_found")
}
