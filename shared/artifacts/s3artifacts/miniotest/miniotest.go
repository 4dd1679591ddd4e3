// Package miniotest starts a MinIO server (an S3-compatible object store) for tests: on
// 127.0.0.1 with a free port and a temporary data directory, stopped by the test. The binary is
// the one scripts/install-minio.sh builds into <repo>/.cache/minio/bin (or $KILN_MINIO).
package miniotest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Region is the region MinIO answers for.
const Region = "us-east-1"

// Server is a running MinIO server.
type Server struct {
	// Endpoint is its URL, http://127.0.0.1:<port>.
	Endpoint string
	// User and Password are its root credentials (the access key id and secret).
	User, Password string

	stop     func()
	stopOnce sync.Once
}

// output collects the server's output for error messages.
type output struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.Write(p)
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// Binary finds the MinIO binary: $KILN_MINIO, else <repo>/.cache/minio/bin/minio. Its error
// says how to install it.
func Binary() (string, error) {
	if p := os.Getenv("KILN_MINIO"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("KILN_MINIO=%s: %w", p, err)
		}
		return p, nil
	}
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	p := filepath.Join(root, ".cache", "minio", "bin", "minio")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("MinIO is not installed (%s is missing): run scripts/install-minio.sh "+
			"(or make deps; it builds MinIO with go install in a few minutes), or set KILN_MINIO to a minio binary", p)
	}
	return p, nil
}

// repoRoot walks up from the working directory to the directory holding go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory; set KILN_MINIO to a minio binary")
		}
		dir = parent
	}
}

// Start starts MinIO with its data in a new temporary directory, with the root credentials of
// $MINIO_ROOT_USER and $MINIO_ROOT_PASSWORD, or random ones when they are not set, and waits
// until it answers. Stop stops it and removes the directory.
func Start() (*Server, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "kiln-minio-")
	if err != nil {
		return nil, err
	}
	s := &Server{User: os.Getenv("MINIO_ROOT_USER"), Password: os.Getenv("MINIO_ROOT_PASSWORD")}
	if s.User == "" || s.Password == "" {
		s.User, s.Password = "kiln-test", randomHex(20)
	}
	addr, err := freeAddr()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	console, err := freeAddr()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s.Endpoint = "http://" + addr
	cmd := exec.Command(bin, "server", "--quiet", "--address", addr, "--console-address", console, filepath.Join(dir, "data"))
	cmd.Env = append(os.Environ(), "MINIO_ROOT_USER="+s.User, "MINIO_ROOT_PASSWORD="+s.Password,
		"MINIO_BROWSER=off", "MINIO_UPDATE=off", "MINIO_CALLHOME_ENABLE=off")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	out := &output{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	stopped := func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
		os.RemoveAll(dir)
	}
	s.stop = stopped
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
		case <-exited:
			os.RemoveAll(dir)
			return nil, fmt.Errorf("minio exited at start:\n%s", out.String())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			stopped()
			return nil, fmt.Errorf("minio did not answer on %s within 60s:\n%s", addr, out.String())
		}
	}
}

// Stop kills the server and removes its data.
func (s *Server) Stop() { s.stopOnce.Do(s.stop) }

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

// CreateBucket creates a bucket named name.
func (s *Server) CreateBucket(ctx context.Context, name string) error {
	_, err := s.Client().CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(name)})
	if err != nil {
		return fmt.Errorf("create bucket %s: %w", name, err)
	}
	return nil
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return "127.0.0.1:" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port), nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
