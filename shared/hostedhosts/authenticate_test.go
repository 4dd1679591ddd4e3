package hostedhosts

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/awslocal/imds"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// TestAuthenticate: a document AWS (here: the stand-in's key) signed, of the deployment's
// account, of an instance in service in the group, is a hosted host; anything else is refused
// with a clear error.
func TestAuthenticate(t *testing.T) {
	s := newStandIns(t)
	s.asg.Launch("i-0000000000000000a", StateInService, nil)
	s.asg.Launch("i-0000000000000000b", "Warmed:Stopped", nil)
	for i := range 3 { // more than one page of instances
		s.asg.Launch("i-00000000000000f0"+string(rune('0'+i)), StateInService, nil)
	}
	other, err := imds.NewSigner()
	if err != nil {
		t.Fatal(err)
	}
	linux := newGroup(t, "kiln-LinuxHosts")
	linux.asg.Launch("i-0000000000000000d", StateInService, nil)
	a := &Authenticator{Certificates: s.certs, AccountID: account, Groups: []PoolGroup{
		{Pool: kiln.HostedPoolWin64, Instances: s.group}, {Pool: kiln.HostedPoolLinux, Instances: linux.group}}}
	good := s.identity(t, account, "i-0000000000000000a")
	tamper := func(edit func(id *Identity)) Identity {
		id := good
		edit(&id)
		return id
	}
	tests := []struct {
		name string
		id   Identity
		code string
		msg  string
	}{
		{"valid", good, "", ""},
		{"no document", Identity{}, kiln.EInvalidToken, "are required"},
		{"document changed", tamper(func(id *Identity) {
			id.Document = strings.Replace(id.Document, "i-0000000000000000a", "i-00000000000000f00", 1)
		}), kiln.EInvalidToken, "does not verify"},
		{"signed by another key", tamper(func(id *Identity) { id.Signature = other.Sign([]byte(id.Document)) }), kiln.EInvalidToken, "does not verify"},
		{"signature not base64", tamper(func(id *Identity) { id.Signature = "%%%" }), kiln.EInvalidToken, "not base64"},
		{"signature truncated", tamper(func(id *Identity) {
			raw, _ := base64.StdEncoding.DecodeString(id.Signature)
			id.Signature = base64.StdEncoding.EncodeToString(raw[:len(raw)-1])
		}), kiln.EInvalidToken, "does not verify"},
		{"another account", s.identity(t, "999999999999", "i-0000000000000000a"), kiln.EInsufficientScope, "another AWS account"},
		{"an instance not in the group", s.identity(t, account, "i-0000000000000000c"), kiln.EInsufficientScope, "not in service"},
		{"an instance of the group not in service", s.identity(t, account, "i-0000000000000000b"), kiln.EInsufficientScope, "not in service"},
	}
	// An instance of the Linux hosts' group is an agent of the Linux pool: it never claims a
	// Win64 build (the dispatcher hands a pool's builds to its agents only).
	if got, err := a.Authenticate(context.Background(), s.identity(t, account, "i-0000000000000000d")); err != nil || got.Pool != kiln.HostedPoolLinux || !got.Hosted {
		t.Fatalf("a Linux host: %+v %v", got, err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := a.Authenticate(context.Background(), tt.id)
			if tt.code == "" {
				if err != nil || got.ID != "i-0000000000000000a" || !got.Hosted || got.Pool != kiln.HostedPoolWin64 || got.OrganizationID != "" {
					t.Fatalf("Authenticate: %+v %v", got, err)
				}
				return
			}
			if got != nil || !kiln.IsCode(err, tt.code) || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("Authenticate: %+v %v, want %s (%q)", got, err, tt.code, tt.msg)
			}
		})
	}
}

func TestParseCertificates(t *testing.T) {
	s := newStandIns(t)
	if certs, err := ParseCertificates(s.signer.CertificatePEM + "\n" + s.signer.CertificatePEM); err != nil || len(certs) != 2 {
		t.Fatalf("two certificates: %d %v", len(certs), err)
	}
	for _, bad := range []string{"", "not pem", "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"} {
		if _, err := ParseCertificates(bad); err == nil {
			t.Errorf("ParseCertificates(%q) = nil error", bad)
		}
	}
}

// TestFetchIdentityIsIMDSv2: the agent asks for a session token and sends it; a metadata
// service refusing tokenless GETs (IMDSv2 required) serves it.
func TestFetchIdentityIsIMDSv2(t *testing.T) {
	s := newStandIns(t)
	inst := imds.NewInstance(s.signer, account, region, "i-0000000000000000a")
	var puts int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut {
			puts++
		}
		inst.ServeHTTP(w, r)
	}))
	defer srv.Close()
	id, err := FetchIdentity(context.Background(), srv.Client(), srv.URL)
	if err != nil || puts != 1 {
		t.Fatalf("FetchIdentity: %v (%d token requests)", err, puts)
	}
	if _, err := s.certs.Verify(id); err != nil {
		t.Fatalf("the fetched identity does not verify: %v", err)
	}
	res, err := srv.Client().Get(srv.URL + "/latest/dynamic/instance-identity/document")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a GET without a token: %s", res.Status)
	}
}
