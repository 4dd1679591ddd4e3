package dynamodblocal

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/guregu/dynamo/v2"

	"github.com/kilnbuild/kiln/shared/store/dynamostore"
)

// jarDir installs DynamoDB Local (cached under .cache/) and returns where its jar is.
func jarDir(t *testing.T) string {
	t.Helper()
	dir, err := InstalledJarDir()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestServerIsReachableOnlyThroughItsNamespace: kiln's own client reaches DynamoDB Local and its
// tables persist across a restart; a plain connection from this machine's network does not get
// through.
func TestServerIsReachableOnlyThroughItsNamespace(t *testing.T) {
	ctx := context.Background()
	dir, data := jarDir(t), filepath.Join(t.TempDir(), "dynamodb")
	s, err := Start(ctx, Options{JarDir: dir, DataDir: data, Port: 8123})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	db := dynamo.New(s.Config())
	if err := dynamostore.CreateTable(ctx, db, "kiln"); err != nil {
		t.Fatal(err)
	}
	if c, err := net.DialTimeout("tcp", "127.0.0.1:8123", time.Second); err == nil {
		c.Close()
		t.Fatal("DynamoDB Local answered on this machine's loopback: it is not confined")
	}
	s.Stop()

	again, err := Start(ctx, Options{JarDir: dir, DataDir: data, Port: 8123})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Stop()
	tables, err := dynamo.New(again.Config()).ListTables().All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) != 1 || tables[0] != "kiln" {
		t.Fatalf("tables after a restart: %v, want [kiln]", tables)
	}
	if entries, _ := os.ReadDir(data); len(entries) == 0 {
		t.Fatal("nothing written under the data directory")
	}
}
