// Package minio runs a MinIO server (an S3-compatible object store that checks presigned
// signatures and their expiry) on 127.0.0.1: for kiln aws-local, where it stands in for S3, and
// for the tests (package miniotest). The binary is the one scripts/install-minio.sh builds into
// <repo>/.cache/minio/bin, or $KILN_MINIO.
package minio

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/kilnbuild/kiln/shared/awslocal/lifeline"
	"github.com/kilnbuild/kiln/shared/awslocal/repodeps"
	"github.com/kilnbuild/kiln/shared/proctree"
	"github.com/kilnbuild/kiln/shared/settings"
	"github.com/kilnbuild/kiln/shared/syncbuf"
)

// Region is the region MinIO answers for.
const Region = "us-east-1"

// Options says how to run the server.
type Options struct {
	// Binary is the minio binary ("": Binary()).
	Binary string
	// DataDir holds the objects.
	DataDir string
	// Addr and ConsoleAddr are 127.0.0.1:<port> addresses to listen on.
	Addr, ConsoleAddr string
	// User and Password are the root credentials (the access key id and secret).
	User, Password string
	// KillWithParent kills the server when the thread that started it ends (Pdeathsig): for
	// tests, whose server must not outlive a crashed test binary.
	KillWithParent bool
	// Lifeline ends the server when its parent ends, however it ends (nil: none).
	Lifeline *lifeline.Lifeline
}

// Server is a running MinIO server.
type Server struct {
	// Endpoint is its URL, http://127.0.0.1:<port>.
	Endpoint string
	// User and Password are its root credentials.
	User, Password string

	cmd      *exec.Cmd
	tree     *proctree.Tree
	lifeline *lifeline.Lifeline
	exited   chan struct{}
	stopOnce sync.Once
}

// Binary finds the MinIO binary: $KILN_MINIO, else <repo>/.cache/minio/bin/minio (the
// repository found above the working directory). Its error says how to install it.
func Binary() (string, error) {
	if p := settings.MinIO.Get(os.Getenv); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("KILN_MINIO=%s: %w", p, err)
		}
		return p, nil
	}
	root, err := repodeps.Root()
	if err != nil {
		return "", fmt.Errorf("find MinIO (run from kiln's repository, or set KILN_MINIO): %w", err)
	}
	p := filepath.Join(root, ".cache", "minio", "bin", "minio")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("MinIO is not installed (%s is missing): run scripts/install-minio.sh "+
			"(or make deps; it builds MinIO with go install in a few minutes), or set KILN_MINIO to a minio binary", p)
	}
	return p, nil
}

// Start starts MinIO and waits until it answers.
func Start(ctx context.Context, o Options) (*Server, error) {
	bin := o.Binary
	if bin == "" {
		var err error
		if bin, err = Binary(); err != nil {
			return nil, err
		}
	}
	if o.User == "" || o.Password == "" || o.Addr == "" || o.ConsoleAddr == "" || o.DataDir == "" {
		return nil, errors.New("minio: data directory, addresses and credentials are required")
	}
	s := &Server{Endpoint: "http://" + o.Addr, User: o.User, Password: o.Password, exited: make(chan struct{}), lifeline: o.Lifeline}
	s.cmd = exec.Command(bin, "server", "--quiet", "--address", o.Addr, "--console-address", o.ConsoleAddr, o.DataDir)
	s.cmd.Env = append(os.Environ(), "MINIO_ROOT_USER="+o.User, "MINIO_ROOT_PASSWORD="+o.Password,
		"MINIO_BROWSER=off", "MINIO_UPDATE=off", "MINIO_CALLHOME_ENABLE=off")
	s.tree = proctree.New(s.cmd, proctree.Options{KillWithParent: o.KillWithParent})
	out := &syncbuf.Buffer{} // the server's output, for error messages
	s.cmd.Stdout, s.cmd.Stderr = out, out
	o.Lifeline.Mark(s.cmd)
	if err := s.tree.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	go func() { _ = s.cmd.Wait(); close(s.exited) }()
	if err := o.Lifeline.Hold(s.cmd.Process.Pid); err != nil {
		s.Stop()
		return nil, fmt.Errorf("minio: %w", err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(s.Endpoint + "/minio/health/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s, nil
			}
		}
		select {
		case <-s.exited:
			return nil, fmt.Errorf("minio exited at start:\n%s", out.String())
		case <-ctx.Done():
			s.Stop()
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.Stop()
			return nil, fmt.Errorf("minio did not answer on %s within 60s:\n%s", o.Addr, out.String())
		}
	}
}

// Stop kills the server (its data stays).
func (s *Server) Stop() {
	s.stopOnce.Do(func() {
		_ = s.tree.Kill()
		<-s.exited
		s.tree.Close()
		_ = s.lifeline.Release(s.cmd.Process.Pid)
	})
}

// Env is the AWS SDK's standard settings that reach this server.
func (s *Server) Env() map[string]string {
	return map[string]string{
		"AWS_ENDPOINT_URL_S3":   s.Endpoint,
		"AWS_REGION":            Region,
		"AWS_ACCESS_KEY_ID":     s.User,
		"AWS_SECRET_ACCESS_KEY": s.Password,
	}
}

// Client is an S3 client of this server, path-style, with its root credentials.
func (s *Server) Client() *s3.Client {
	return s3.New(s3.Options{
		Region:       Region,
		BaseEndpoint: aws.String(s.Endpoint),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(s.User, s.Password, ""),
	})
}

// CreateBucket creates a bucket named name; one that exists already is fine.
func (s *Server) CreateBucket(ctx context.Context, name string) error {
	_, err := s.Client().CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(name)})
	if err != nil {
		var owned interface{ ErrorCode() string }
		if errors.As(err, &owned) && (owned.ErrorCode() == "BucketAlreadyOwnedByYou" || owned.ErrorCode() == "BucketAlreadyExists") {
			return nil
		}
		return fmt.Errorf("create bucket %s: %w", name, err)
	}
	return nil
}
