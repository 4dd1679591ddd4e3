package awslocalapp

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/guregu/dynamo/v2"

	"github.com/kilnbuild/kiln/shared/artifacts/s3artifacts"
	"github.com/kilnbuild/kiln/shared/awslocal/dynamodblocal"
	"github.com/kilnbuild/kiln/shared/awslocal/lifeline"
	"github.com/kilnbuild/kiln/shared/awslocal/minio"
	"github.com/kilnbuild/kiln/shared/awslocal/repodeps"
	"github.com/kilnbuild/kiln/shared/compose/onemachine"
	"github.com/kilnbuild/kiln/shared/keyring"
	"github.com/kilnbuild/kiln/shared/store/dynamostore"
)

// Under KILN_DATA, kiln aws-local keeps everything in aws-local/: DynamoDB Local's files, MinIO's
// objects and root credentials, and the master key (what Secrets Manager holds in AWS).
const (
	awsLocalDir   = "aws-local"
	awsLocalTable = "kiln"
	// awsLocalBucket is the artifacts' bucket of an aws-local with backends of its own.
	awsLocalBucket = "kiln-artifacts"
)

// artifactsURL is where artifacts are kept in bucket.
func artifactsURL(bucket string) string { return "s3://" + bucket + "/artifacts" }

// awsBackends are the stand-ins of AWS's data services: DynamoDB Local (in a private network
// namespace), MinIO for S3, and a key file for Secrets Manager.
type awsBackends struct {
	dynamo    *dynamodblocal.Server
	minio     *minio.Server
	db        *dynamo.DB
	store     *dynamostore.Store
	logs      *dynamostore.Logs
	s3        *s3.Client
	artifacts *s3artifacts.Store
	keys      *keyring.Keyring
	// table and bucket are this aws-local's in DynamoDB Local and MinIO.
	table, bucket string
	// shared is true when dynamo and minio are Options.Backends: they outlive this aws-local.
	shared bool
}

// Backends are DynamoDB Local (in memory) and MinIO, started once and shared by several kiln
// aws-local, as the tests of a package share them (Options.Backends): each aws-local keeps its
// own table and bucket in them, named after its data directory, so a restart on the same data
// directory finds its state again.
type Backends struct {
	dynamo *dynamodblocal.Server
	minio  *minio.Server
}

// StartBackends starts DynamoDB Local and MinIO (its objects under dir), both ended with this
// process however it ends, installing them into the repository's .cache/ on first use.
func StartBackends(ctx context.Context, dir string, logger *slog.Logger) (_ *Backends, err error) {
	b := &Backends{}
	defer func() {
		if err != nil {
			b.Stop()
		}
	}()
	jars, err := dynamodblocal.InstalledJarDir()
	if err != nil {
		return nil, err
	}
	if b.dynamo, err = dynamodblocal.Start(ctx, dynamodblocal.Options{JarDir: jars, KillWithParent: true}); err != nil {
		return nil, err
	}
	if b.minio, err = startMinIO(ctx, dir, nil, true, logger); err != nil {
		return nil, err
	}
	return b, nil
}

// Stop ends both servers.
func (b *Backends) Stop() {
	if b.minio != nil {
		b.minio.Stop()
	}
	if b.dynamo != nil {
		b.dynamo.Stop()
	}
}

// startMinIO starts MinIO with its objects and root credentials under dir.
func startMinIO(ctx context.Context, dir string, life *lifeline.Lifeline, killWithParent bool, logger *slog.Logger) (*minio.Server, error) {
	bin, err := minioBinary(logger)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	user, password, err := minioCredentials(filepath.Join(dir, "minio-credentials.json"))
	if err != nil {
		return nil, err
	}
	addr, err := freeLoopbackAddr()
	if err != nil {
		return nil, err
	}
	console, err := freeLoopbackAddr()
	if err != nil {
		return nil, err
	}
	return minio.Start(ctx, minio.Options{Binary: bin, DataDir: filepath.Join(dir, "minio"), Addr: addr, ConsoleAddr: console,
		User: user, Password: password, Lifeline: life, KillWithParent: killWithParent})
}

// sharedNames are the table and bucket of the aws-local on dataDir in shared backends.
func sharedNames(dataDir string) (table, bucket string) {
	sum := sha256.Sum256([]byte(dataDir))
	id := hex.EncodeToString(sum[:8])
	return "kiln-" + id, "kiln-artifacts-" + id
}

// startAWSBackends starts DynamoDB Local and MinIO on their data under dataDir (installing them
// into the repository's .cache/ on first use, as the tests do) and opens the table, the bucket
// and the master key, creating what is missing.
// With shared backends (not nil) it uses those, with a table and a bucket of its own.
func startAWSBackends(ctx context.Context, dataDir string, artifactMax int64, shared *Backends, life *lifeline.Lifeline, logger *slog.Logger) (_ *awsBackends, err error) {
	dir := filepath.Join(dataDir, awsLocalDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	b := &awsBackends{table: awsLocalTable, bucket: awsLocalBucket}
	defer func() {
		if err != nil {
			b.stop()
		}
	}()
	if b.keys, err = keyring.LoadOrCreate(filepath.Join(dir, onemachine.MasterKeyFile)); err != nil {
		return nil, err
	}
	if shared != nil {
		b.dynamo, b.minio, b.shared = shared.dynamo, shared.minio, true
		b.table, b.bucket = sharedNames(dataDir)
	} else {
		jars, err := dynamodblocal.InstalledJarDir()
		if err != nil {
			return nil, err
		}
		if b.dynamo, err = dynamodblocal.Start(ctx, dynamodblocal.Options{JarDir: jars, DataDir: filepath.Join(dir, "dynamodb"), Lifeline: life}); err != nil {
			return nil, err
		}
		if b.minio, err = startMinIO(ctx, dir, life, false, logger); err != nil {
			return nil, err
		}
	}
	b.db = dynamo.New(b.dynamo.Config())
	if err := ensureTable(ctx, b.db, b.table); err != nil {
		return nil, err
	}
	b.store, b.logs = dynamostore.New(b.db, b.table), dynamostore.NewLogs(b.db, b.table)
	if err := b.minio.CreateBucket(ctx, b.bucket); err != nil {
		return nil, err
	}
	b.s3 = b.minio.Client()
	if b.artifacts, err = s3artifacts.FromURL(b.s3, artifactsURL(b.bucket), artifactMax); err != nil {
		return nil, err
	}
	return b, nil
}

func (b *awsBackends) stop() {
	if b.shared {
		return
	}
	if b.minio != nil {
		b.minio.Stop()
	}
	if b.dynamo != nil {
		b.dynamo.Stop()
	}
}

// ensureTable creates the table unless it exists.
func ensureTable(ctx context.Context, db *dynamo.DB, table string) error {
	names, err := db.ListTables().All(ctx)
	if err != nil {
		return fmt.Errorf("list DynamoDB tables: %w", err)
	}
	for _, n := range names {
		if n == table {
			return nil
		}
	}
	return dynamostore.CreateTable(ctx, db, table)
}

// minioBinary finds MinIO: $KILN_MINIO, else the repository's cached build, made by
// scripts/install-minio.sh on first use (a few minutes, once).
func minioBinary(logger *slog.Logger) (string, error) {
	if bin, err := minio.Binary(); err == nil {
		return bin, nil
	}
	return install(logger, "install-minio.sh")
}

// install runs one of the repository's scripts/install-*.sh (repodeps.Install), saying so in the
// log, and returns where it installed the dependency.
func install(logger *slog.Logger, name string) (string, error) {
	logger.Info("aws-local: installing a dependency (once; cached under .cache/)", slog.String("script", name))
	dir, err := repodeps.Install(name)
	if err != nil {
		return "", fmt.Errorf("kiln aws-local installs what it needs with the scripts of kiln's repository: %w", err)
	}
	return dir, nil
}

// minioCredentials reads MinIO's root credentials, making them on first use.
func minioCredentials(path string) (user, password string, err error) {
	var c struct{ User, Password string }
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		if err := json.Unmarshal(data, &c); err != nil || c.User == "" || c.Password == "" {
			return "", "", fmt.Errorf("%s: not MinIO credentials written by kiln", path)
		}
		return c.User, c.Password, nil
	case !errors.Is(err, fs.ErrNotExist):
		return "", "", err
	}
	secret := make([]byte, 20)
	if _, err := rand.Read(secret); err != nil {
		return "", "", err
	}
	c.User, c.Password = "kiln-aws-local", hex.EncodeToString(secret)
	data, _ = json.Marshal(c)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return "", "", err
	}
	return c.User, c.Password, nil
}

func freeLoopbackAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return "127.0.0.1:" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port), nil
}
