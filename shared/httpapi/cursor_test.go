package httpapi

import (
	"testing"

	"github.com/kilnbuild/kiln/shared/kiln"
)

func TestCursorsAreBoundToOrganizationAndQuery(t *testing.T) {
	c := cursors{key: []byte("0123456789abcdef0123456789abcdef")}
	cur := c.encode("org1", "builds?status=complete", "BUILD123")
	if cur == nil {
		t.Fatal("no cursor for a next page")
	}
	if got, err := c.decode("org1", "builds?status=complete", *cur); err != nil || got != "BUILD123" {
		t.Fatalf("decode = %q, %v", got, err)
	}
	tampered := []byte(*cur)
	tampered[4] ^= 1
	bad := []struct{ name, org, query, cursor string }{
		{"other organization", "org2", "builds?status=complete", *cur},
		{"other query", "org1", "builds?status=failed", *cur},
		{"tampered", "org1", "builds?status=complete", string(tampered)},
		{"garbage", "org1", "builds?status=complete", "hello"},
		{"other key", "org1", "builds?status=complete", *cursors{key: []byte("another key of thirty-two bytes!")}.encode("org1", "builds?status=complete", "BUILD123")},
	}
	for _, tt := range bad {
		if _, err := c.decode(tt.org, tt.query, tt.cursor); !kiln.IsCode(err, kiln.EValidation) {
			t.Errorf("%s: decode err = %v, want validation_failed", tt.name, err)
		}
	}
	if c.encode("org1", "q", "") != nil {
		t.Error("a last page has a cursor")
	}
}
