// Package dynamodblocaltest runs a test binary's tests against one DynamoDB Local: a
// dynamodblocal.Server, in memory, in its private network namespace, ended with the test binary
// however it ends. Each test makes a table of its own (NewTable).
package dynamodblocaltest

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/guregu/dynamo/v2"

	"github.com/kilnbuild/kiln/shared/awslocal/dynamodblocal"
	"github.com/kilnbuild/kiln/shared/store/dynamostore"
)

var (
	// server is the running DynamoDB Local, set by Main.
	server *dynamodblocal.Server
	// config reaches it; one, so the tests share its connections.
	config aws.Config
)

// Main runs a test binary's tests with DynamoDB Local, from its TestMain:
// func TestMain(m *testing.M) { os.Exit(dynamodblocaltest.Main(m)) }. It installs DynamoDB
// Local on first use (dynamodblocal.InstalledJarDir) and needs root, as dynamodblocal does.
func Main(m *testing.M) int {
	dir, err := dynamodblocal.InstalledJarDir()
	if err != nil {
		fmt.Fprintf(os.Stderr, "dynamodblocaltest: FAIL: %v\n", err)
		return 1
	}
	s, err := dynamodblocal.Start(context.Background(), dynamodblocal.Options{JarDir: dir, KillWithParent: true})
	if err != nil {
		fmt.Fprintf(os.Stderr, "dynamodblocaltest: FAIL: start DynamoDB Local from %s: %v\n", dir, err)
		return 1
	}
	defer s.Stop()
	server, config = s, s.Config()
	return m.Run()
}

// Config is an AWS configuration that reaches DynamoDB Local (only from this process: see
// LoopbackURL for other clients).
func Config() aws.Config { return config }

// DB is a client of DynamoDB Local.
func DB() *dynamo.DB { return dynamo.New(config) }

var tableSeq atomic.Int64

// NewTable creates a fresh table on DynamoDB Local and returns its name and a store on it.
func NewTable(t testing.TB) (string, *dynamostore.Store) {
	t.Helper()
	db := DB()
	name := fmt.Sprintf("kiln-test-%d", tableSeq.Add(1))
	if err := dynamostore.CreateTable(t.Context(), db, name); err != nil {
		t.Fatalf("create table %s: %v", name, err)
	}
	return name, dynamostore.New(db, name)
}
