package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/agentapi"
	"github.com/kilnbuild/kiln/shared/awslocal/imds"
	"github.com/kilnbuild/kiln/shared/hostedhosts"
)

// TestAgentEC2HostClaimsWithItsIdentity: `kiln agent --ec2-host` claims with no token, with the
// instance identity document and signature it read over IMDSv2, for kiln's hosted pool of its
// platform (Win64 or Linux); for another platform, or with a token, it refuses to start.
func TestAgentEC2HostClaimsWithItsIdentity(t *testing.T) {
	engines := fakeEngines(t, "5.4")
	signer, meta := fakeIMDS(t)
	certs, err := hostedhosts.ParseCertificates(signer.CertificatePEM)
	if err != nil {
		t.Fatal(err)
	}
	type claim struct {
		auth, body string
		id         hostedhosts.Identity
	}
	got := make(chan claim, 10)
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		doc, _ := base64.StdEncoding.DecodeString(r.Header.Get(agentapi.HeaderInstanceIdentity))
		got <- claim{auth: r.Header.Get("Authorization"), body: string(body),
			id: hostedhosts.Identity{Document: string(doc), Signature: r.Header.Get(agentapi.HeaderInstanceSignature)}}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer api.Close()
	for _, tc := range []struct{ platforms, pool string }{
		{"Win64", "kiln-hosted-win64"}, // the Windows AMI's service sets none: Windows is its machine's platform
		{"Linux", "kiln-hosted-linux"}, // the Linux hosts' user data sets it
	} {
		env := map[string]string{"KILN_AGENT_EC2": "1", "KILN_HOST_URL": api.URL, "KILN_AGENT_IMDS": meta.URL, "KILN_AGENT_PLATFORMS": tc.platforms}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			done <- agentCmd(ctx, []string{"--engines", engines}, func(k string) string { return env[k] }, &bytes.Buffer{})
		}()
		var c claim
		select {
		case c = <-got:
		case <-time.After(20 * time.Second):
			t.Fatal("no claim came")
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("kiln agent --ec2-host after a stop: %v", err)
		}
		if c.auth != "" || !strings.Contains(c.body, `"pool":"`+tc.pool+`"`) || !strings.Contains(c.body, `"platforms":["`+tc.platforms+`"]`) {
			t.Fatalf("%s claim: auth %q, body %s", tc.platforms, c.auth, c.body)
		}
		doc, err := certs.Verify(c.id)
		if err != nil || doc.InstanceID != "i-0123456789abcdef0" {
			t.Fatalf("the claim's identity: %+v %v", doc, err)
		}
		for len(got) > 0 { // claims of the stopped agent
			<-got
		}
	}
	for _, bad := range []string{"Mac", "Win64,Linux"} {
		env := map[string]string{"KILN_AGENT_EC2": "1", "KILN_HOST_URL": api.URL, "KILN_AGENT_IMDS": meta.URL, "KILN_AGENT_PLATFORMS": bad}
		if err := agentCmd(context.Background(), []string{"--engines", engines}, func(k string) string { return env[k] }, &bytes.Buffer{}); err == nil ||
			!strings.Contains(err.Error(), "Win64 or Linux") {
			t.Errorf("--ec2-host for %s: %v", bad, err)
		}
	}
	if err := agentCmd(context.Background(), []string{"--ec2-host", "--url", api.URL, "--token", "kagent_x", "--engines", engines},
		func(string) string { return "" }, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "no token") {
		t.Fatalf("--ec2-host with a token: %v", err)
	}
}

// fakeIMDS serves the instance metadata of EC2 instance i-0123456789abcdef0 (account
// 123456789012, us-east-1), its identity signed by signer, until the test ends.
func fakeIMDS(t *testing.T) (*imds.Signer, *httptest.Server) {
	t.Helper()
	signer, err := imds.NewSigner()
	if err != nil {
		t.Fatal(err)
	}
	meta := httptest.NewServer(imds.NewInstance(signer, "123456789012", "us-east-1", "i-0123456789abcdef0"))
	t.Cleanup(meta.Close)
	return signer, meta
}
