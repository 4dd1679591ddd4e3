package serve

import (
	"io"
	"strings"
	"testing"
)

func TestArtifactsSetting(t *testing.T) {
	for _, tc := range []struct {
		value, want, err string
	}{
		{"", "file", ""},
		{"file", "file", ""},
		{"s3://studio-artifacts", "s3://studio-artifacts", ""},
		{"s3://studio-artifacts/kiln/prod", "s3://studio-artifacts/kiln/prod", ""},
		{"files", "", "KILN_ARTIFACTS"},
		{"s3://Bad_Bucket", "", "KILN_ARTIFACTS"},
		{"s3://bucket/../x", "", "KILN_ARTIFACTS"},
		{"gs://bucket", "", "KILN_ARTIFACTS"},
	} {
		c, err := LoadConfig(nil, func(k string) string {
			if k == "KILN_ARTIFACTS" {
				return tc.value
			}
			return ""
		}, io.Discard)
		if tc.err == "" && (err != nil || c.Artifacts != tc.want) {
			t.Errorf("KILN_ARTIFACTS=%q: %q, %v; want %q", tc.value, c.Artifacts, err, tc.want)
		}
		if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("KILN_ARTIFACTS=%q: error %v, want one naming %s", tc.value, err, tc.err)
		}
	}
}
