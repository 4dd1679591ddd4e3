package agentapi_test

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	sdkautoscaling "github.com/aws/aws-sdk-go-v2/service/autoscaling"

	"github.com/kilnbuild/kiln/shared/agentapi"
	"github.com/kilnbuild/kiln/shared/agentapi/hostclient"
	"github.com/kilnbuild/kiln/shared/agentpool"
	"github.com/kilnbuild/kiln/shared/awslocal/autoscaling"
	"github.com/kilnbuild/kiln/shared/awslocal/imds"
	"github.com/kilnbuild/kiln/shared/builds"
	"github.com/kilnbuild/kiln/shared/hostcred"
	"github.com/kilnbuild/kiln/shared/hostedhosts"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store/sqlitestore"
)

// TestHostedHostClaims: through the claim endpoint, one of kiln's EC2 hosts claims with its
// instance identity (read over IMDSv2) a Win64 build of the hosted pool; a bad signature,
// another account, an instance not in service in the group, a second claim of the same
// instance, and an identity sent to a deployment without hosted hosts are refused (401/403 with
// a clear message) and change nothing.
func TestHostedHostClaims(t *testing.T) {
	ctx := context.Background()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	st, err := sqlitestore.Open(ctx, filepath.Join(t.TempDir(), "kiln.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	const account, region = "123456789012", "us-east-1"
	signer, err := imds.NewSigner()
	if err != nil {
		t.Fatal(err)
	}
	certs, err := hostedhosts.ParseCertificates(signer.CertificatePEM)
	if err != nil {
		t.Fatal(err)
	}
	group := &autoscaling.Group{Name: "kiln-win"}
	asgSrv := httptest.NewServer(group)
	defer asgSrv.Close()
	group.Launch("i-000000000000000a1", hostedhosts.StateInService, nil)
	group.Launch("i-000000000000000a2", hostedhosts.StateInService, nil)
	group.Launch("i-000000000000000a3", "Pending", nil)
	asg := sdkautoscaling.New(sdkautoscaling.Options{BaseEndpoint: aws.String(asgSrv.URL), Region: region,
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})

	lc := &builds.Lifecycle{Builds: st, Projects: st, Logger: logger}
	d := &agentpool.Dispatcher{Store: st, Lifecycle: lc, Hosted: st, Logger: logger}
	// A Linux hosts' group beside: its instances claim the Linux pool's builds only.
	linuxGroup := &autoscaling.Group{Name: "kiln-linux"}
	linuxSrv := httptest.NewServer(linuxGroup)
	defer linuxSrv.Close()
	linuxGroup.Launch("i-000000000000000b1", hostedhosts.StateInService, nil)
	linuxASG := sdkautoscaling.New(sdkautoscaling.Options{BaseEndpoint: aws.String(linuxSrv.URL), Region: region,
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})
	auth := &hostedhosts.Authenticator{Certificates: certs, AccountID: account, Logger: logger, Groups: []hostedhosts.PoolGroup{
		{Pool: kiln.HostedPoolWin64, Instances: &hostedhosts.Group{Client: asg, Name: "kiln-win"}},
		{Pool: kiln.HostedPoolLinux, Instances: &hostedhosts.Group{Client: linuxASG, Name: "kiln-linux"}},
	}}
	api := httptest.NewServer((&agentapi.Claims{Dispatcher: d, Hosted: auth, HostURL: "https://kiln.example", Logger: logger}).Handler())
	defer api.Close()
	noHosted := httptest.NewServer((&agentapi.Claims{Dispatcher: d, HostURL: "https://kiln.example", Logger: logger}).Handler())
	defer noHosted.Close()

	now := time.Now().UTC().Truncate(time.Millisecond)
	var gen kiln.IDGenerator
	b := &kiln.Build{ID: gen.New(now), OrganizationID: kiln.NewID(), ProjectID: kiln.NewID(), BuildSettingID: kiln.NewID(),
		Status: kiln.StatusPending, Platform: kiln.PlatformWin64, BuildType: kiln.BuildTypeShipping, Branch: "main",
		UEVersion: "5.4", AgentPool: kiln.HostedPoolWin64, TriggeredBy: "cron", CreatedAt: now}
	if err := st.CreateBuild(ctx, b); err != nil {
		t.Fatal(err)
	}
	identity := func(s *imds.Signer, acct, instance string) *hostedhosts.Identity {
		srv := httptest.NewServer(imds.NewInstance(s, acct, region, instance))
		defer srv.Close()
		id, err := hostedhosts.FetchIdentity(ctx, srv.Client(), srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		return &id
	}
	claim := func(url string, id *hostedhosts.Identity) (*agentapi.ClaimAnswer, error) {
		l := &hostclient.AgentLoop{URL: url, Identity: id, Platforms: []string{"Win64"}, EngineVersions: []string{"5.4"}, Wait: -1}
		return l.Claim(ctx)
	}
	other, err := imds.NewSigner()
	if err != nil {
		t.Fatal(err)
	}
	forged := identity(signer, account, "i-000000000000000a1")
	forged.Document = strings.Replace(forged.Document, "i-000000000000000a1", "i-000000000000000a2", 1)
	unchanged := func(t *testing.T) {
		t.Helper()
		got, err := st.GetBuild(ctx, b.OrganizationID, b.ID)
		if err != nil || got.Status != kiln.StatusPending || got.Host != "" {
			t.Fatalf("the refused claim changed the build: %+v %v", got, err)
		}
		for _, id := range []string{"i-000000000000000a1", "i-000000000000000a2", "i-000000000000000a3"} {
			if h, err := st.GetHostedHost(ctx, id); !kiln.IsCode(err, kiln.ENotFound) {
				t.Fatalf("the refused claim recorded host %s: %+v %v", id, h, err)
			}
		}
	}
	for _, tt := range []struct {
		name, url string
		id        *hostedhosts.Identity
		code, msg string
	}{
		{"signed by another key", api.URL, identity(other, account, "i-000000000000000a1"), kiln.EInvalidToken, "does not verify"},
		{"a document changed after signing", api.URL, forged, kiln.EInvalidToken, "does not verify"},
		{"another account", api.URL, identity(signer, "210987654321", "i-000000000000000a1"), kiln.EInsufficientScope, "another AWS account"},
		{"an instance not in the group", api.URL, identity(signer, account, "i-0000000000000ffff"), kiln.EInsufficientScope, "not in service"},
		{"an instance not yet in service", api.URL, identity(signer, account, "i-000000000000000a3"), kiln.EInsufficientScope, "not in service"},
		{"a deployment without hosted hosts", noHosted.URL, identity(signer, account, "i-000000000000000a1"), kiln.EInvalidToken, "no hosted hosts"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := claim(tt.url, tt.id)
			if c != nil || kiln.ErrorCode(err) != tt.code || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("claim: %+v %v, want %s (%q)", c, err, tt.code, tt.msg)
			}
			unchanged(t)
		})
	}

	// A Linux host, even offering Win64, does not get the Win64 build: it waits in the Windows
	// hosts' pool.
	linuxHost := &hostclient.AgentLoop{URL: api.URL, Identity: identity(signer, account, "i-000000000000000b1"),
		Platforms: []string{"Linux", "Win64"}, EngineVersions: []string{"5.4"}, Wait: -1}
	if c, err := linuxHost.Claim(ctx); c != nil || err != nil {
		t.Fatalf("a Linux host's claim: %+v %v, want no build", c, err)
	}
	unchanged(t)

	host := identity(signer, account, "i-000000000000000a1")
	c, err := claim(api.URL, host)
	if err != nil || c == nil || c.BuildID != b.ID {
		t.Fatalf("the valid claim: %+v %v", c, err)
	}
	got, err := st.GetBuild(ctx, b.OrganizationID, b.ID)
	if err != nil || got.Status != kiln.StatusRunning || got.Host != "ec2:i-000000000000000a1" || !hostcred.Matches(c.HostCredential, got.HostCredentialHash) {
		t.Fatalf("the claimed build: %+v %v", got, err)
	}

	// Its second claim is refused, with another build waiting, which stays pending.
	b2 := &kiln.Build{ID: gen.New(now.Add(time.Second)), OrganizationID: kiln.NewID(), ProjectID: kiln.NewID(), BuildSettingID: kiln.NewID(),
		Status: kiln.StatusPending, Platform: kiln.PlatformWin64, BuildType: kiln.BuildTypeShipping, Branch: "main",
		UEVersion: "5.4", AgentPool: kiln.HostedPoolWin64, TriggeredBy: "cron", CreatedAt: now}
	if err := st.CreateBuild(ctx, b2); err != nil {
		t.Fatal(err)
	}
	if c, err := claim(api.URL, host); c != nil || kiln.ErrorCode(err) != kiln.EInsufficientScope || !strings.Contains(err.Error(), "one build already") {
		t.Fatalf("second claim: %+v %v", c, err)
	}
	if got, _ := st.GetBuild(ctx, b2.OrganizationID, b2.ID); got.Status != kiln.StatusPending || got.Host != "" {
		t.Fatalf("the refused second claim changed a build: %+v", got)
	}
	if h, _ := st.GetHostedHost(ctx, "i-000000000000000a1"); h.BuildID != b.ID {
		t.Fatalf("the refused second claim changed the record: %+v", h)
	}
	// Another instance takes it.
	if c, err := claim(api.URL, identity(signer, account, "i-000000000000000a2")); err != nil || c == nil || c.BuildID != b2.ID {
		t.Fatalf("another instance's claim: %+v %v", c, err)
	}
}
