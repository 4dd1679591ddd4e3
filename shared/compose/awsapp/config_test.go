package awsapp

import (
	"strings"
	"testing"
)

func TestAWSArtifactsSetting(t *testing.T) {
	env := map[string]string{"KILN_DYNAMODB_TABLE": "kiln", "KILN_MASTER_KEY_SECRET_ARN": "arn:aws:secretsmanager:eu-west-1:1:secret:k"}
	getenv := func(k string) string { return env[k] }
	for _, tc := range []struct {
		value, want string
		ok          bool
	}{
		{"", "", true}, // no artifact store yet
		{"s3://kiln-artifacts-123/prod", "s3://kiln-artifacts-123/prod", true},
		{"file", "", false}, // a Lambda has no disk to keep them on
		{"s3://x", "", false},
	} {
		env["KILN_ARTIFACTS"] = tc.value
		c, err := LoadAWSConfig(getenv)
		if tc.ok && (err != nil || c.Artifacts != tc.want) {
			t.Errorf("KILN_ARTIFACTS=%q: %q, %v; want %q", tc.value, c.Artifacts, err, tc.want)
		}
		if !tc.ok && (err == nil || !strings.Contains(err.Error(), "KILN_ARTIFACTS")) {
			t.Errorf("KILN_ARTIFACTS=%q: error %v, want one naming KILN_ARTIFACTS", tc.value, err)
		}
	}
}
