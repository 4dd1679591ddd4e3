package dynamodblocaltest

import (
	"context"
	"os"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/guregu/dynamo/v2"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// TestTablesAreReachableBothWays: a table NewTable makes is seen through Config, and through
// LoopbackURL by a client with no dialer of its own, as code configured by its environment is.
func TestTablesAreReachableBothWays(t *testing.T) {
	name, _ := NewTable(t)
	plain := aws.Config{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(LoopbackURL(t)),
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "kiln", SecretAccessKey: "kiln"}, nil
		}),
	}
	for _, tt := range []struct {
		name string
		db   *dynamo.DB
	}{{"Config", DB()}, {"LoopbackURL", dynamo.New(plain)}} {
		t.Run(tt.name, func(t *testing.T) {
			tables, err := tt.db.ListTables().All(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(tables, name) {
				t.Fatalf("tables %v, want %s among them", tables, name)
			}
		})
	}
}
