package hostedhosts

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	sdkautoscaling "github.com/aws/aws-sdk-go-v2/service/autoscaling"

	"github.com/kilnbuild/kiln/shared/awslocal/autoscaling"
	"github.com/kilnbuild/kiln/shared/awslocal/imds"
)

const (
	account   = "123456789012"
	region    = "eu-west-1"
	groupName = "kiln-WindowsHosts"
)

// standIns are a signer of identity documents and the hosts' group behind the real Auto
// Scaling client.
type standIns struct {
	signer *imds.Signer
	certs  Certificates
	asg    *autoscaling.Group
	group  *Group
}

func newStandIns(t *testing.T) *standIns {
	t.Helper()
	signer, err := imds.NewSigner()
	if err != nil {
		t.Fatal(err)
	}
	certs, err := ParseCertificates(signer.CertificatePEM)
	if err != nil {
		t.Fatal(err)
	}
	g := newGroup(t, groupName)
	return &standIns{signer: signer, certs: certs, asg: g.asg, group: g.group}
}

// groupStandIn is an Auto Scaling group stand-in behind the real client.
type groupStandIn struct {
	asg   *autoscaling.Group
	group *Group
}

func newGroup(t *testing.T, name string) groupStandIn {
	t.Helper()
	asg := &autoscaling.Group{Name: name}
	srv := httptest.NewServer(asg)
	t.Cleanup(srv.Close)
	client := sdkautoscaling.New(sdkautoscaling.Options{BaseEndpoint: aws.String(srv.URL), Region: region,
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})
	return groupStandIn{asg: asg, group: &Group{Client: client, Name: name}}
}

// identity is the identity an instance's metadata service serves, read through IMDSv2.
func (s *standIns) identity(t *testing.T, accountID, instanceID string) Identity {
	t.Helper()
	srv := httptest.NewServer(imds.NewInstance(s.signer, accountID, region, instanceID))
	defer srv.Close()
	id, err := FetchIdentity(context.Background(), srv.Client(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return id
}
