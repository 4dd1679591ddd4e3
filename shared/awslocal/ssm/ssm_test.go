package ssm

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awsssm "github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/aws/aws-sdk-go-v2/service/ssm/types"
)

func client(t *testing.T) (*awsssm.Client, *Server) {
	s := &Server{Region: "us-east-1", Account: "000000000000"}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return awsssm.New(awsssm.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider("AKIALOCALTEST", "x", "")}), s
}

// TestParameterStore: through the AWS SDK, a SecureString is answered decrypted only with
// WithDecryption, is replaced only with Overwrite, and is gone after DeleteParameter; unknown
// names are InvalidParameters, a second delete ParameterNotFound; the standard tier's value
// limit and the naming rules hold.
func TestParameterStore(t *testing.T) {
	ctx := context.Background()
	c, s := client(t)
	name := "/Kiln/hosts/b1/k"
	if _, err := c.PutParameter(ctx, &awsssm.PutParameterInput{Name: aws.String(name), Value: aws.String("kbh.secret"), Type: types.ParameterTypeSecureString}); err != nil {
		t.Fatal(err)
	}
	get := func(decrypt bool) *awsssm.GetParametersOutput {
		t.Helper()
		out, err := c.GetParameters(ctx, &awsssm.GetParametersInput{Names: []string{name, "/Kiln/hosts/none"}, WithDecryption: aws.Bool(decrypt)})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	out := get(true)
	if len(out.Parameters) != 1 || aws.ToString(out.Parameters[0].Value) != "kbh.secret" || out.Parameters[0].Type != types.ParameterTypeSecureString ||
		aws.ToString(out.Parameters[0].ARN) != "arn:aws:ssm:us-east-1:000000000000:parameter/Kiln/hosts/b1/k" || len(out.InvalidParameters) != 1 {
		t.Fatalf("GetParameters with decryption: %+v", out)
	}
	if v := aws.ToString(get(false).Parameters[0].Value); v == "" || strings.Contains(v, "secret") {
		t.Errorf("GetParameters without decryption answered %q, want the ciphertext", v)
	}
	_, err := c.PutParameter(ctx, &awsssm.PutParameterInput{Name: aws.String(name), Value: aws.String("other"), Type: types.ParameterTypeSecureString})
	var exists *types.ParameterAlreadyExists
	if !errors.As(err, &exists) {
		t.Errorf("a second put without Overwrite: %v, want ParameterAlreadyExists", err)
	}
	if _, err := c.PutParameter(ctx, &awsssm.PutParameterInput{Name: aws.String(name), Value: aws.String("other"), Type: types.ParameterTypeSecureString, Overwrite: aws.Bool(true)}); err != nil {
		t.Fatal(err)
	}
	if v := aws.ToString(get(true).Parameters[0].Value); v != "other" {
		t.Errorf("after an overwrite the value is %q", v)
	}
	for _, bad := range []*awsssm.PutParameterInput{
		{Name: aws.String("/Kiln/big"), Value: aws.String(strings.Repeat("x", MaxValueBytes+1)), Type: types.ParameterTypeSecureString},
		{Name: aws.String("Kiln/hosts/x"), Value: aws.String("v"), Type: types.ParameterTypeSecureString},
		{Name: aws.String("/aws/x"), Value: aws.String("v"), Type: types.ParameterTypeSecureString},
		{Name: aws.String("/Kiln/a b"), Value: aws.String("v"), Type: types.ParameterTypeSecureString},
		{Name: aws.String("/Kiln/x"), Value: aws.String("v"), Type: types.ParameterTypeSecureString, Tier: types.ParameterTierAdvanced},
	} {
		if _, err := c.PutParameter(ctx, bad); err == nil {
			t.Errorf("PutParameter %s accepted", aws.ToString(bad.Name))
		}
	}
	if _, err := c.DeleteParameter(ctx, &awsssm.DeleteParameterInput{Name: aws.String(name)}); err != nil {
		t.Fatal(err)
	}
	if names := s.Names(); len(names) != 0 {
		t.Errorf("after the delete the stand-in holds %v", names)
	}
	_, err = c.DeleteParameter(ctx, &awsssm.DeleteParameterInput{Name: aws.String(name)})
	var missing *types.ParameterNotFound
	if !errors.As(err, &missing) {
		t.Errorf("a second delete: %v, want ParameterNotFound", err)
	}
}
