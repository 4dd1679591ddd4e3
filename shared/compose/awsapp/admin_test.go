package awsapp

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store/sqlitestore"
)

// TestAdminBadInputChangesNothing: a bootstrap refused for its input records nothing, so the
// first valid one still goes through; unknown commands and missing fields are bad_request.
func TestAdminBadInputChangesNothing(t *testing.T) {
	ctx := context.Background()
	st, err := sqlitestore.Open(ctx, filepath.Join(t.TempDir(), "kiln.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	a := &Admin{Store: st}
	for _, tc := range []struct {
		req  AdminRequest
		code string
	}{
		{AdminRequest{Command: "bootstrap", Organization: "Studio", Email: "not an email", Name: "Owner"}, kiln.EValidation},
		{AdminRequest{Command: "bootstrap", Organization: "Studio", Name: "Owner"}, kiln.EBadRequest},
		{AdminRequest{Command: "user", Email: "a@b.example", Name: "A"}, kiln.EBadRequest},
		{AdminRequest{Command: "token", OrganizationID: "x"}, kiln.EBadRequest},
		{AdminRequest{Command: "drop"}, kiln.EBadRequest},
	} {
		if _, err := a.Run(ctx, tc.req); !kiln.IsCode(err, tc.code) {
			t.Errorf("%+v: %v, want %s", tc.req, err, tc.code)
		}
	}
	res, err := a.Run(ctx, AdminRequest{Command: "bootstrap", Organization: "Studio", Email: "owner@studio.example", Name: "Owner"})
	if err != nil || res.Token == "" {
		t.Fatalf("the first valid bootstrap: %+v %v", res, err)
	}
	if _, err := a.Run(ctx, AdminRequest{Command: "bootstrap", Organization: "Again", Email: "owner@studio.example", Name: "Owner"}); !kiln.IsCode(err, kiln.EConflict) {
		t.Fatalf("a second bootstrap: %v, want conflict", err)
	}
}
