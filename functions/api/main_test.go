package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/kilnbuild/kiln/shared/accounts"
	"github.com/kilnbuild/kiln/shared/httpapi"
	"github.com/kilnbuild/kiln/shared/keyring"
	"github.com/kilnbuild/kiln/shared/store/sqlitestore"
)

// TestSampleEventsThroughTheHandler decodes every API event in events/ into the exact type the
// Lambda handler takes, strictly, and feeds it to the handler over the real router.
func TestSampleEventsThroughTheHandler(t *testing.T) {
	ctx := context.Background()
	st, err := sqlitestore.Open(ctx, filepath.Join(t.TempDir(), "kiln.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	created, err := accounts.CreateOrganization(ctx, st, accounts.NewOrganization{Name: "Studio", OwnerEmail: "a@studio.example", OwnerName: "A"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	keys, err := keyring.New(bytes.Repeat([]byte{7}, keyring.MasterKeySize))
	if err != nil {
		t.Fatal(err)
	}
	handler := newHandler(httpapi.New(httpapi.Config{Store: st, Keys: keys}))

	want := map[string]struct {
		status int
		has    string
	}{
		"api-get-auth-me.json":                      {200, `"role":"owner"`},
		"api-patch-organization-unknown-field.json": {400, `"error":"validation_failed"`},
	}
	files, _ := filepath.Glob("../../events/api-*.json")
	if len(files) != len(want) {
		t.Fatalf("events/ holds %d API events, the test knows %d: add the new ones here", len(files), len(want))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			raw = bytes.ReplaceAll(raw, []byte("kiln_REPLACEDBYTHETESTWITHAREALTOKEN0000000"), []byte(created.Token))
			raw = bytes.ReplaceAll(raw, []byte("ORGANIZATIONIDREPLACEDBYTEST"), []byte(created.Organization.ID))
			var ev events.APIGatewayV2HTTPRequest
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&ev); err != nil {
				t.Fatalf("%s is not an APIGatewayV2HTTPRequest: %v", f, err)
			}
			resp, err := handler(ctx, ev)
			if err != nil {
				t.Fatal(err)
			}
			w := want[filepath.Base(f)]
			if resp.StatusCode != w.status || !strings.Contains(resp.Body, w.has) {
				t.Fatalf("got %d %s, want %d with %s", resp.StatusCode, resp.Body, w.status, w.has)
			}
			if resp.Headers["X-Request-Id"] == "" {
				t.Errorf("no X-Request-Id header: %v", resp.Headers)
			}
		})
	}
}
