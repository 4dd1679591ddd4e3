package ssmparam

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/aws/aws-sdk-go-v2/service/ssm/types"

	awslocalssm "github.com/kilnbuild/kiln/shared/awslocal/ssm"
)

// TestStore: Put makes a SecureString of the standard tier and replaces one of the same name;
// Delete removes it, and deleting one that is gone is not an error (Parameter Store's protocol:
// kiln aws-local's stand-in).
func TestStore(t *testing.T) {
	ctx := context.Background()
	srv := httptest.NewServer(&awslocalssm.Server{Region: "us-east-1", Account: "000000000000"})
	defer srv.Close()
	client := ssm.New(ssm.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), Credentials: credentials.NewStaticCredentialsProvider("AKIALOCALTASK", "x", "")})
	s := Store{Client: client}
	name := "/Kiln/hosts/b/k"
	for _, v := range []string{"first", "second"} {
		if err := s.Put(ctx, name, v); err != nil {
			t.Fatal(err)
		}
	}
	out, err := client.GetParameters(ctx, &ssm.GetParametersInput{Names: []string{name}, WithDecryption: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Parameters) != 1 || out.Parameters[0].Type != types.ParameterTypeSecureString || aws.ToString(out.Parameters[0].Value) != "second" {
		t.Fatalf("stored %+v, want the SecureString second", out.Parameters)
	}
	for range 2 {
		if err := s.Delete(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	if out, _ := client.GetParameters(ctx, &ssm.GetParametersInput{Names: []string{name}}); len(out.Parameters) != 0 {
		t.Errorf("after Delete: %+v", out.Parameters)
	}
}
