package s3artifacts_test

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"

	"github.com/kilnbuild/kiln/shared/awslocal/minio/miniotest"
)

// minio is the server every test of this package uses; TestMain starts it.
var minio *miniotest.Server

func TestMain(m *testing.M) { os.Exit(testMain(m)) }

func testMain(m *testing.M) int {
	s, err := miniotest.Start()
	if err != nil {
		fmt.Fprintf(os.Stderr, "s3artifacts: FAIL: cannot start MinIO: %v\n", err)
		return 1
	}
	defer s.Stop()
	minio = s
	return m.Run()
}

var buckets atomic.Int64

// newBucket creates an empty bucket with a name no other test uses.
func newBucket(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("kiln-test-%d", buckets.Add(1))
	if err := minio.CreateBucket(context.Background(), name); err != nil {
		t.Fatal(err)
	}
	return name
}
