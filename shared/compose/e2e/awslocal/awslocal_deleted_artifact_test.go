package awslocal

import (
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
)

// TestDeletedArtifactIsNotFound: on aws-local, the signed URL of an artifact whose object was
// deleted behind its record (the bucket's lifecycle backstop, an operator) answers the API's
// documented 404 not_found, not a 500. S3 tells the API function the key is missing (404
// NoSuchKey) only because its role may list the bucket under the artifacts' prefix; without it S3
// answers 403 AccessDenied, which aws-local logs as a refusal, and the API fails with an internal
// error (issue 36, finding 5a: the API's role before this grant).
func TestDeletedArtifactIsNotFound(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		edits   []e2e.TemplateEdit
		status  int
		code    string
		refusal string // the refusal aws-local logs, if any
	}{
		{name: "StackAsIs", status: http.StatusNotFound, code: "not_found"},
		// The API's role as it was: S3 answers 403, the API an internal error.
		{name: "APIWithoutListBucket", edits: []e2e.TemplateEdit{e2e.WithoutAction("api", "s3:ListBucket")},
			status: http.StatusInternalServerError, code: "internal", refusal: "/api is not authorized to perform: s3:ListBucket"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := e2e.NewWorld(t, e2e.AWSLocal, e2e.WithTemplate(e2e.WriteTemplate(t, tt.edits...)))
			if tt.refusal != "" {
				e2e.ExpectRefusals(t, w, tt.refusal)
			}
			pid := w.AddShooter(t)
			sid := w.AddSetting(t, pid, nil)["id"].(string)
			id := w.Trigger(t, pid, sid, "")
			if b := w.WaitEnded(t, id); b["status"] != "complete" {
				t.Fatalf("build ended %v: %v\nlog:\n%s", b["status"], b["failureReason"], w.LogText(t, id))
			}
			d := w.Do(t, "GET", "/builds/"+id+"/download", w.Token, nil)
			if d.Status != http.StatusOK {
				t.Fatalf("download descriptor: %d %s", d.Status, d.Raw)
			}
			if _, err := w.AWS.S3().DeleteObject(t.Context(), &s3.DeleteObjectInput{
				Bucket: aws.String(w.AWS.Bucket()), Key: aws.String("artifacts/" + w.OrgID + "/" + id + ".tar.gz"),
			}); err != nil {
				t.Fatalf("delete the artifact's object: %v", err)
			}
			req, err := http.NewRequest("GET", e2e.Field(t, d.Body, "url"), nil)
			if err != nil {
				t.Fatal(err)
			}
			e2e.WantError(t, w.DoRequest(t, req), tt.status, tt.code)
			if tt.refusal != "" && !strings.Contains(w.Logs.String(), tt.refusal) {
				t.Errorf("aws-local logged no refusal %q", tt.refusal)
			}
		})
	}
}
