package dynamostore_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/guregu/dynamo/v2"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/storefixture"
)

// GSI4 is sparse: only queued builds, builds awaiting delivery, scheduled settings, artifacts and
// pending webhook deliveries carry its keys, and an item that leaves a scan loses them. storetest
// sees only what the scans return; these tests read the items as stored.

// gsi4Keys reads the GSI4 attributes of the item pk/sk ("" when absent).
func gsi4Keys(t *testing.T, table dynamo.Table, pk, sk string) (string, string) {
	t.Helper()
	var it struct {
		GSI4PK string `dynamo:"GSI4PK"`
		GSI4SK string `dynamo:"GSI4SK"`
	}
	if err := table.Get("PK", pk).Range("SK", dynamo.Equal, sk).Consistent(true).One(t.Context(), &it); err != nil {
		t.Fatalf("get %s %s: %v", pk, sk, err)
	}
	return it.GSI4PK, it.GSI4SK
}

func wantGSI4(t *testing.T, table dynamo.Table, what, pk, sk, wantPK, wantSK string) {
	t.Helper()
	if gotPK, gotSK := gsi4Keys(t, table, pk, sk); gotPK != wantPK || gotSK != wantSK {
		t.Fatalf("%s: GSI4 keys %q / %q, want %q / %q", what, gotPK, gotSK, wantPK, wantSK)
	}
}

func TestGSI4KeysOfBuilds(t *testing.T) {
	s, table := newStoreTable(t)
	orgID := newOrg(t, s)
	b := newBuild(orgID, kiln.NewID(), kiln.PlatformLinux)
	if err := s.CreateBuild(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	pk, sk := "ORG#"+orgID, "BUILD#"+b.ID
	wantGSI4(t, table, "pending build", pk, sk, "QUEUE#pending", b.ID)
	steps := []struct {
		to             kiln.BuildStatus
		wantPK, wantSK string
	}{
		{kiln.StatusRunning, "QUEUE#running", b.ID},
		{kiln.StatusComplete, "", ""},
	}
	for _, st := range steps {
		from := b.Status
		if err := b.Transition(st.to, time.Now(), ""); err != nil {
			t.Fatal(err)
		}
		if err := s.UpdateBuild(t.Context(), b, from, kiln.AllBuildFields); err != nil {
			t.Fatal(err)
		}
		wantGSI4(t, table, string(st.to)+" build", pk, sk, st.wantPK, st.wantSK)
	}
}

// A build whose setting deploys moves from the queue partitions to "DEPLOY" when it completes,
// and leaves GSI4 when its delivery ends; a build without auto deploy or one that fails never
// enters "DEPLOY".
func TestGSI4KeysOfBuildsAwaitingDelivery(t *testing.T) {
	s, table := newStoreTable(t)
	orgID := newOrg(t, s)
	b := newBuild(orgID, kiln.NewID(), kiln.PlatformLinux)
	b.AutoDeployStatus = kiln.AutoDeployPending
	if err := s.CreateBuild(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	pk, sk := "ORG#"+orgID, "BUILD#"+b.ID
	wantGSI4(t, table, "pending build with auto deploy", pk, sk, "QUEUE#pending", b.ID)
	steps := []struct {
		to             kiln.BuildStatus
		deploy         kiln.AutoDeployStatus
		wantPK, wantSK string
	}{
		{kiln.StatusRunning, kiln.AutoDeployPending, "QUEUE#running", b.ID},
		{kiln.StatusComplete, kiln.AutoDeployPending, "DEPLOY", "000000000000000#" + b.ID},
		{kiln.StatusComplete, kiln.AutoDeployDelivering, "DEPLOY", "000000000000000#" + b.ID},
		{kiln.StatusComplete, kiln.AutoDeployPending, "DEPLOY", "000000000000000#" + b.ID},
		{kiln.StatusComplete, kiln.AutoDeploySucceeded, "", ""},
	}
	for _, st := range steps {
		from := b.Status
		if st.to != from {
			if err := b.Transition(st.to, time.Now(), ""); err != nil {
				t.Fatal(err)
			}
		}
		b.AutoDeployStatus = st.deploy
		if err := s.UpdateBuild(t.Context(), b, from, kiln.AllBuildFields); err != nil {
			t.Fatal(err)
		}
		wantGSI4(t, table, fmt.Sprintf("%s build, delivery %s", st.to, st.deploy), pk, sk, st.wantPK, st.wantSK)
	}
	// A retry scheduled (RecordBuildDelivery) sorts the build by its due time.
	b.AutoDeployStatus = kiln.AutoDeployPending
	if err := s.UpdateBuild(t.Context(), b, kiln.StatusComplete, kiln.AllBuildFields); err != nil {
		t.Fatal(err)
	}
	b.AutoDeployStatus, b.AutoDeployNextAt = kiln.AutoDeployDelivering, time.UnixMilli(1234567890123).UTC()
	if err := s.RecordBuildDelivery(t.Context(), b, time.Time{}); err != nil {
		t.Fatal(err)
	}
	wantGSI4(t, table, "build whose retry is scheduled", pk, sk, "DEPLOY", "001234567890123#"+b.ID)
	b.AutoDeployStatus, b.AutoDeployNextAt = kiln.AutoDeploySucceeded, time.Time{}
	if err := s.RecordBuildDelivery(t.Context(), b, time.UnixMilli(1234567890123)); err != nil {
		t.Fatal(err)
	}
	wantGSI4(t, table, "build delivered", pk, sk, "", "")

	for _, c := range []struct {
		what   string
		status kiln.BuildStatus
		deploy kiln.AutoDeployStatus
	}{
		{"complete build without auto deploy", kiln.StatusComplete, kiln.AutoDeployNone},
		{"failed build with a pending delivery", kiln.StatusFailed, kiln.AutoDeployPending},
		{"superseded build delivering", kiln.StatusSuperseded, kiln.AutoDeployDelivering},
		{"complete build whose delivery failed", kiln.StatusComplete, kiln.AutoDeployFailed},
	} {
		x := newBuild(orgID, kiln.NewID(), kiln.PlatformLinux)
		x.Status, x.AutoDeployStatus = c.status, c.deploy
		if err := s.CreateBuild(t.Context(), x); err != nil {
			t.Fatal(err)
		}
		wantGSI4(t, table, c.what, pk, "BUILD#"+x.ID, "", "")
	}
}

func TestGSI4KeysOfSettingsAndArtifacts(t *testing.T) {
	s, table := newStoreTable(t)
	orgID := newOrg(t, s)
	at := time.Now().UTC()
	p := storefixture.Project(t, s, orgID, at)
	bs := storefixture.Setting(t, s, p, at)
	pk, sk := "ORG#"+orgID, "SETTING#"+p.ID+"#"+bs.ID
	wantGSI4(t, table, "manual setting", pk, sk, "", "")
	for _, st := range []struct {
		trigger        kiln.Trigger
		schedule       string
		wantPK, wantSK string
	}{
		{kiln.TriggerScheduled, "0 3 * * *", "SCHEDULED", orgID + "#" + bs.ID},
		{kiln.TriggerPush, "", "", ""},
	} {
		bs.Trigger, bs.Schedule = st.trigger, st.schedule
		if err := s.UpdateBuildSetting(t.Context(), bs); err != nil {
			t.Fatal(err)
		}
		wantGSI4(t, table, string(st.trigger)+" setting", pk, sk, st.wantPK, st.wantSK)
	}

	a := &kiln.Artifact{
		BuildID: kiln.NewID(), OrganizationID: orgID, ProjectID: p.ID, BuildSettingID: bs.ID,
		Key: "a.tar.gz", CreatedAt: time.UnixMilli(1_700_000_000_123).UTC(),
	}
	if err := s.CreateArtifact(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	wantGSI4(t, table, "artifact", pk, "ARTIFACT#"+a.BuildID, "ARTIFACTS",
		fmt.Sprintf("001700000000123#%s#%s", orgID, a.BuildID))
}

// A webhook delivery is in "WEBHOOKS#pending" only while pending; its payload is stored as binary.
func TestGSI4KeysOfWebhookDeliveries(t *testing.T) {
	s, table := newStoreTable(t)
	ctx := t.Context()
	orgID := newOrg(t, s)
	at := time.Now().UTC()
	w := &kiln.Webhook{ID: kiln.NewID(), OrganizationID: orgID, URL: "https://example.com/hook", Active: true,
		Events: []kiln.WebhookEvent{kiln.EventBuildComplete}, CreatedAt: at, UpdatedAt: at}
	if err := s.CreateWebhook(ctx, w); err != nil {
		t.Fatal(err)
	}
	d := &kiln.WebhookDelivery{ID: kiln.NewID(), OrganizationID: orgID, WebhookID: w.ID, Event: kiln.EventBuildComplete,
		Payload: []byte(`{"a":1}`), Status: kiln.DeliveryPending, CreatedAt: at, UpdatedAt: at}
	if err := s.CreateWebhookDelivery(ctx, d); err != nil {
		t.Fatal(err)
	}
	pk, sk := "ORG#"+orgID, "DELIVERY#"+w.ID+"#"+d.ID
	wantGSI4(t, table, "pending delivery", pk, sk, "WEBHOOKS#pending", "000000000000000#"+d.ID)
	var raw map[string]any
	if err := table.Get("PK", pk).Range("SK", dynamo.Equal, sk).Consistent(true).One(ctx, &raw); err != nil {
		t.Fatal(err)
	}
	if _, ok := raw["payload"].([]byte); !ok {
		t.Fatalf("payload stored as %T, want binary", raw["payload"])
	}
	for _, st := range []struct {
		status         kiln.DeliveryStatus
		wantPK, wantSK string
	}{
		{kiln.DeliveryFailed, "", ""},
		{kiln.DeliveryPending, "WEBHOOKS#pending", "000000000000000#" + d.ID},
		{kiln.DeliverySucceeded, "", ""},
	} {
		d.Status = st.status
		if err := s.UpdateWebhookDelivery(ctx, d); err != nil {
			t.Fatal(err)
		}
		wantGSI4(t, table, fmt.Sprintf("%s delivery", st.status), pk, sk, st.wantPK, st.wantSK)
	}
	d.Status, d.NextAttemptAt = kiln.DeliveryPending, time.UnixMilli(42).UTC()
	if err := s.UpdateWebhookDelivery(ctx, d); err != nil {
		t.Fatal(err)
	}
	wantGSI4(t, table, "delivery whose retry is scheduled", pk, sk, "WEBHOOKS#pending", "000000000000042#"+d.ID)
}
