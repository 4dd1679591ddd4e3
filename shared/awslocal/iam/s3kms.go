package iam

import (
	"net/http"
	"strings"
)

// S3KMS is the SSE-KMS encryption of a bucket: S3 calls KMS with the caller's rights on every
// read and write of an object, so the caller's role needs the KMS actions on the key too. AWS
// sets kms:ViaService (s3.<region>.amazonaws.com) and kms:CallerAccount on those calls, which a
// grant limited to S3's use names. MinIO encrypts nothing: aws-local only checks the calls.
type S3KMS struct {
	// Bucket is the bucket's name; KeyARN its key's ARN (the template's KMSMasterKeyID).
	Bucket, KeyARN  string
	Region, Account string
}

// Calls are the KMS calls S3 makes on the caller's behalf for its calls on the bucket's
// objects, as "Using server-side encryption with AWS KMS keys (SSE-KMS)" lists the permissions
// (https://docs.aws.amazon.com/AmazonS3/latest/userguide/UsingKMSEncryption.html): an upload
// needs kms:GenerateDataKey, a download kms:Decrypt, each step of a multipart upload both ("Amazon
// S3 must decrypt and read data from the encrypted file parts before it completes the multipart
// upload"), a copy kms:Decrypt of its source and kms:GenerateDataKey of its copy. An S3 Bucket
// Key makes S3 call KMS less often, not with other rights. HEAD, listings and deletes call no
// KMS action.
func (k S3KMS) Calls(r *http.Request, calls []Call) []Call {
	if k.KeyARN == "" {
		return nil
	}
	object := "arn:aws:s3:::" + k.Bucket + "/"
	q := r.URL.Query()
	multipart := q.Has("uploads") || q.Has("uploadId")
	var actions []string
	for _, c := range calls {
		if !strings.HasPrefix(c.Resource, object) {
			continue
		}
		switch {
		case c.Action == "s3:GetObject" && r.Method == http.MethodGet:
			actions = append(actions, "kms:Decrypt")
		case c.Action == "s3:GetObject" && r.Header.Get("X-Amz-Copy-Source") != "":
			actions = append(actions, "kms:Decrypt") // the copy's source
		case c.Action == "s3:PutObject" && multipart:
			actions = append(actions, "kms:GenerateDataKey", "kms:Decrypt")
		case c.Action == "s3:PutObject":
			actions = append(actions, "kms:GenerateDataKey")
		}
	}
	var out []Call
	seen := map[string]bool{}
	for _, a := range actions {
		if seen[a] {
			continue
		}
		seen[a] = true
		out = append(out, Call{Action: a, Resource: k.KeyARN, Context: map[string]string{
			"kms:viaservice": "s3." + k.Region + ".amazonaws.com", "kms:calleraccount": k.Account}})
	}
	return out
}

// BucketKey returns the ARN of the KMS key a bucket of the template (by aws-local's name of it)
// encrypts its objects with by default (SSE-KMS), or "" for none.
func (t *Template) BucketKey(bucket string) (string, error) {
	for id, r := range t.resources {
		if r.Type != "AWS::S3::Bucket" || t.resolved[id] == nil || t.resolved[id].ref != bucket {
			continue
		}
		for _, rule := range asList(dig(r.Properties, "BucketEncryption", "ServerSideEncryptionConfiguration")) {
			m, _ := rule.(map[string]any)
			if dig(m, "ServerSideEncryptionByDefault", "SSEAlgorithm") != "aws:kms" {
				continue
			}
			key, err := t.Resolve(dig(m, "ServerSideEncryptionByDefault", "KMSMasterKeyID"))
			if err != nil {
				return "", err
			}
			s, _ := key.(string)
			return s, nil
		}
	}
	return "", nil
}
