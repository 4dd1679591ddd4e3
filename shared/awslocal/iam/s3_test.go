package iam

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// missingKeyTemplate has three readers of the artifacts: one that may not list the bucket, one
// that may list it under the artifacts' prefix, one that may list only the caches.
const missingKeyTemplate = `{"Resources": {
  "Artifacts82DD59A1": {"Type": "AWS::S3::Bucket", "Properties": {}},
  "ReaderFunctionRole00000001": {"Type": "AWS::IAM::Role", "Properties": {"Policies": [{"PolicyName": "p", "PolicyDocument": {"Statement": [
    {"Effect": "Allow", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::b/artifacts/*"}]}}]}},
  "ReaderFunction0000000A": {"Type": "AWS::Lambda::Function", "Properties": {"Role": {"Fn::GetAtt": ["ReaderFunctionRole00000001", "Arn"]}}},
  "ListerFunctionRole00000002": {"Type": "AWS::IAM::Role", "Properties": {"Policies": [{"PolicyName": "p", "PolicyDocument": {"Statement": [
    {"Effect": "Allow", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::b/artifacts/*"},
    {"Effect": "Allow", "Action": "s3:ListBucket", "Resource": "arn:aws:s3:::b", "Condition": {"StringLike": {"s3:prefix": "artifacts/*"}}}]}}]}},
  "ListerFunction0000000B": {"Type": "AWS::Lambda::Function", "Properties": {"Role": {"Fn::GetAtt": ["ListerFunctionRole00000002", "Arn"]}}},
  "CachesFunctionRole00000003": {"Type": "AWS::IAM::Role", "Properties": {"Policies": [{"PolicyName": "p", "PolicyDocument": {"Statement": [
    {"Effect": "Allow", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::b/artifacts/*"},
    {"Effect": "Allow", "Action": "s3:ListBucket", "Resource": "arn:aws:s3:::b", "Condition": {"StringLike": {"s3:prefix": "artifacts/caches/*"}}}]}}]}},
  "CachesFunction0000000C": {"Type": "AWS::Lambda::Function", "Properties": {"Role": {"Fn::GetAtt": ["CachesFunctionRole00000003", "Arn"]}}}
}}`

// TestS3MissingKey: S3 answers a key that does not exist with 404 NoSuchKey only to a caller
// that may s3:ListBucket with the key as s3:prefix, and with 403 AccessDenied (logged as a
// refusal) to any other; a key that exists is read alike by all.
func TestS3MissingKey(t *testing.T) {
	tmpl, err := ParseTemplate([]byte(missingKeyTemplate), testNames)
	if err != nil {
		t.Fatal(err)
	}
	auth, err := NewAuthorizer(tmpl, func(p string) string { return "KEY-" + p }, func(p string) string { return p }, nil)
	if err != nil {
		t.Fatal(err)
	}
	minio := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/here") {
			io.WriteString(w, "data")
			return
		}
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusNotFound)
		if r.Method != http.MethodHead {
			io.WriteString(w, `<Error><Code>NoSuchKey</Code></Error>`)
		}
	}))
	defer minio.Close()
	target, _ := url.Parse(minio.URL)
	var logs bytes.Buffer
	proxy := httptest.NewServer(&S3Proxy{Auth: auth, Target: target, Region: "us-east-1", Logger: slog.New(slog.NewJSONHandler(&logs, nil)),
		Credentials: aws.Credentials{AccessKeyID: "root", SecretAccessKey: "root"}})
	defer proxy.Close()

	for _, tt := range []struct {
		principal, method, key string
		status                 int
		code                   string // of the XML error, GET only
	}{
		{"reader", "GET", "artifacts/o/here", 200, ""},
		{"reader", "GET", "artifacts/o/gone", 403, "AccessDenied"},
		{"reader", "HEAD", "artifacts/o/gone", 403, ""},
		{"lister", "GET", "artifacts/o/gone", 404, "NoSuchKey"},
		{"lister", "HEAD", "artifacts/o/gone", 404, ""},
		{"caches", "GET", "artifacts/caches/o/gone", 404, "NoSuchKey"},
		{"caches", "GET", "artifacts/o/gone", 403, "AccessDenied"},
	} {
		t.Run(tt.principal+" "+tt.method+" "+tt.key, func(t *testing.T) {
			logs.Reset()
			req, _ := http.NewRequest(tt.method, proxy.URL+"/b/"+tt.key, nil)
			req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=KEY-"+tt.principal+"/20250101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=x")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.status || !strings.Contains(string(body), tt.code) {
				t.Fatalf("%d %s, want %d %s", resp.StatusCode, body, tt.status, tt.code)
			}
			refused := strings.Contains(logs.String(), RefusedMessage)
			if refused != (tt.status == 403) {
				t.Fatalf("refusal logged: %v; log:\n%s", refused, logs.String())
			}
			if refused && !strings.Contains(logs.String(), "is not authorized to perform: s3:ListBucket on resource: arn:aws:s3:::b") {
				t.Fatalf("the refusal does not name s3:ListBucket:\n%s", logs.String())
			}
		})
	}
}

// TestS3KMSCalls: the KMS calls S3 makes with the caller's rights on an SSE-KMS bucket, each
// with kms:ViaService set to S3's, so that a grant limited to S3's use (kms:ViaService) meets
// its condition and any other use of the key does not.
func TestS3KMSCalls(t *testing.T) {
	kms := S3KMS{Bucket: "b", KeyARN: "arn:aws:kms:us-east-1:000000000000:key/k", Region: "us-east-1", Account: "000000000000"}
	for _, tt := range []struct {
		method, url, copySource string
		want                    string
	}{
		{"GET", "/b/artifacts/o/1.tar.gz", "", "kms:Decrypt"},
		{"HEAD", "/b/artifacts/o/1.tar.gz", "", ""},
		{"PUT", "/b/artifacts/o/1.tar.gz", "", "kms:GenerateDataKey"},
		{"POST", "/b/artifacts/o/1.tar.gz?uploads", "", "kms:GenerateDataKey,kms:Decrypt"},
		{"PUT", "/b/artifacts/o/1.tar.gz?partNumber=1&uploadId=u", "", "kms:GenerateDataKey,kms:Decrypt"},
		{"POST", "/b/artifacts/o/1.tar.gz?uploadId=u", "", "kms:GenerateDataKey,kms:Decrypt"},
		{"PUT", "/b/artifacts/o/2.tar.gz", "/b/artifacts/o/1.tar.gz", "kms:GenerateDataKey,kms:Decrypt"},
		{"DELETE", "/b/artifacts/o/1.tar.gz", "", ""},
		{"GET", "/b?list-type=2&prefix=artifacts/", "", ""},
		{"GET", "/other/k", "", ""},
	} {
		t.Run(tt.method+" "+tt.url, func(t *testing.T) {
			r := httptest.NewRequest(tt.method, tt.url, nil)
			if tt.copySource != "" {
				r.Header.Set("X-Amz-Copy-Source", tt.copySource)
			}
			calls, err := S3Calls(r, nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range kms.Calls(r, calls) {
				if c.Resource != kms.KeyARN || c.Context["kms:viaservice"] != "s3.us-east-1.amazonaws.com" {
					t.Errorf("%+v: not on the key via S3", c)
				}
				got = append(got, c.Action)
			}
			if strings.Join(got, ",") != tt.want {
				t.Fatalf("KMS calls %v, want %s", got, tt.want)
			}
		})
	}
	viaS3 := []Statement{{Actions: []string{"kms:Decrypt"}, Resources: []string{kms.KeyARN},
		Condition: map[string]map[string][]string{"StringEquals": {"kms:ViaService": {"s3.us-east-1.amazonaws.com"}}}}}
	r := httptest.NewRequest("GET", "/b/artifacts/o/1.tar.gz", nil)
	calls, _ := S3Calls(r, nil)
	if got := evaluate(viaS3, kms.Calls(r, calls)[0]); got != allowed {
		t.Errorf("a download's kms:Decrypt under a grant via S3: %v", got)
	}
	if got := evaluate(viaS3, Call{Action: "kms:Decrypt", Resource: kms.KeyARN}); got != implicitDeny {
		t.Errorf("kms:Decrypt called directly under a grant via S3: %v", got)
	}
}

// TestBucketKey: the template's bucket named as aws-local names it has its SSE-KMS key's ARN.
func TestBucketKey(t *testing.T) {
	tmpl, err := ParseTemplate([]byte(`{"Resources": {
  "Key1": {"Type": "AWS::KMS::Key", "Properties": {}},
  "Artifacts82DD59A1": {"Type": "AWS::S3::Bucket", "Properties": {"BucketEncryption": {"ServerSideEncryptionConfiguration": [
    {"ServerSideEncryptionByDefault": {"SSEAlgorithm": "aws:kms", "KMSMasterKeyID": {"Fn::GetAtt": ["Key1", "Arn"]}}, "BucketKeyEnabled": true}]}}},
  "Plain": {"Type": "AWS::S3::Bucket", "Properties": {}},
  "ScheduleFunction1A2B3C4D": {"Type": "AWS::Lambda::Function", "Properties": {"Environment": {"Variables": {
    "KILN_ARTIFACTS": {"Fn::Join": ["", ["s3://", {"Ref": "Artifacts82DD59A1"}, "/artifacts"]]}}}}}}}`), testNames)
	if err != nil {
		t.Fatal(err)
	}
	for bucket, want := range map[string]string{"kiln-artifacts": "arn:aws:kms:us-east-1:000000000000:key/Key1", "Plain": "", "none": ""} {
		if got, err := tmpl.BucketKey(bucket); err != nil || got != want {
			t.Errorf("BucketKey(%s) = %q, %v; want %q", bucket, got, err, want)
		}
	}
}
