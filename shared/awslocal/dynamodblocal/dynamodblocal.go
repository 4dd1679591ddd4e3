// Package dynamodblocal runs DynamoDB Local (Amazon's Java server) for kiln aws-local and for
// tests (package dynamodblocaltest; InstalledJarDir finds or installs the jars). DynamoDB
// Local listens on every interface and has no flag to bind one, so it runs in a private network
// namespace where only loopback exists, and kiln reaches it by opening its connections from a
// thread that entered that namespace: nothing outside this process can connect to it.
// It needs root (or CAP_SYS_ADMIN), as the tests that run it do.
package dynamodblocal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/guregu/dynamo/v2"

	"github.com/kilnbuild/kiln/shared/awslocal/lifeline"
	"github.com/kilnbuild/kiln/shared/proctree"
)

// Options says where DynamoDB Local is and where it keeps its data.
type Options struct {
	// JarDir holds DynamoDBLocal.jar and DynamoDBLocal_lib (scripts/install-dynamodb-local.sh).
	JarDir string
	// DataDir keeps the tables across restarts; "" keeps them in memory.
	DataDir string
	// Port is the port inside the namespace (0: 8000).
	Port int
	// Lifeline ends the server when its parent ends, however it ends (nil: none).
	Lifeline *lifeline.Lifeline
	// KillWithParent ends the server when this process ends (Linux's Pdeathsig, see
	// proctree.Options): for tests, which start no Lifeline.
	KillWithParent bool
}

// Server is a running DynamoDB Local in its own network namespace.
type Server struct {
	// Endpoint is its URL inside the namespace; only Config and HTTPClient reach it.
	Endpoint string

	cmd      *exec.Cmd
	tree     *proctree.Tree
	lifeline *lifeline.Lifeline
	exited   chan struct{}
	netns    *os.File
	stopOnce sync.Once
	stderr   bytes.Buffer
}

// Start starts DynamoDB Local and waits until it answers.
func Start(ctx context.Context, o Options) (*Server, error) {
	if !netnsSupported {
		return nil, errNoNetns
	}
	if _, err := os.Stat(filepath.Join(o.JarDir, "DynamoDBLocal.jar")); err != nil {
		return nil, fmt.Errorf("dynamodblocal: no DynamoDBLocal.jar in %s (scripts/install-dynamodb-local.sh installs it): %w", o.JarDir, err)
	}
	port := o.Port
	if port == 0 {
		port = 8000
	}
	store := []string{"-inMemory"}
	if o.DataDir != "" {
		if err := os.MkdirAll(o.DataDir, 0o700); err != nil {
			return nil, fmt.Errorf("dynamodblocal: %w", err)
		}
		store = []string{"-dbPath", o.DataDir}
	}
	java := append([]string{"java", "-Djava.library.path=" + filepath.Join(o.JarDir, "DynamoDBLocal_lib"),
		"-jar", filepath.Join(o.JarDir, "DynamoDBLocal.jar"), "-sharedDb", "-disableTelemetry", "-port", strconv.Itoa(port)}, store...)
	args := append([]string{"-n", "sh", "-c", `ip link set lo up && exec "$@"`, "sh"}, java...)
	s := &Server{Endpoint: "http://127.0.0.1:" + strconv.Itoa(port), exited: make(chan struct{}), lifeline: o.Lifeline}
	s.cmd = exec.Command("unshare", args...)
	s.cmd.Dir = o.JarDir
	s.cmd.Stderr = &s.stderr
	s.tree = proctree.New(s.cmd, proctree.Options{KillWithParent: o.KillWithParent})
	o.Lifeline.Mark(s.cmd)
	if err := s.tree.Start(); err != nil {
		return nil, fmt.Errorf("dynamodblocal: start unshare: %w", err)
	}
	if err := o.Lifeline.Hold(s.cmd.Process.Pid); err != nil {
		_ = s.tree.Kill()
		_ = s.cmd.Wait()
		return nil, fmt.Errorf("dynamodblocal: %w", err)
	}
	go func() { _ = s.cmd.Wait(); close(s.exited) }()
	if err := s.openNamespace(ctx); err != nil {
		s.Stop()
		return nil, err
	}
	if err := s.waitReady(ctx); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// openNamespace waits until the child entered its new network namespace and opens it.
func (s *Server) openNamespace(ctx context.Context) error {
	own, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		return fmt.Errorf("dynamodblocal: %w", err)
	}
	path := fmt.Sprintf("/proc/%d/ns/net", s.cmd.Process.Pid)
	for deadline := time.Now().Add(10 * time.Second); ; {
		if ns, err := os.Readlink(path); err == nil && ns != own {
			f, err := os.Open(path)
			if err != nil {
				return fmt.Errorf("dynamodblocal: open its network namespace: %w", err)
			}
			s.netns = f
			return nil
		}
		select {
		case <-s.exited:
			return fmt.Errorf("dynamodblocal: unshare -n failed (it needs root or CAP_SYS_ADMIN): %s", s.stderr.String())
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return errors.New("dynamodblocal: the server's network namespace did not appear within 10s")
		}
	}
}

func (s *Server) waitReady(ctx context.Context) error {
	db := dynamo.New(s.Config())
	deadline := time.Now().Add(90 * time.Second)
	for {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := db.ListTables().All(cctx)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-s.exited:
			return fmt.Errorf("dynamodblocal: DynamoDB Local exited at start: %s", s.stderr.String())
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("dynamodblocal: no answer within 90s: %v\n%s", err, s.stderr.String())
		}
	}
}

// HTTPClient is an HTTP client whose connections go into the server's namespace.
func (s *Server) HTTPClient() *http.Client {
	return &http.Client{Transport: &http.Transport{DialContext: s.DialContext, MaxIdleConnsPerHost: 64, IdleConnTimeout: 90 * time.Second}}
}

// Config is an AWS configuration that reaches the server (fixed dummy credentials: DynamoDB
// Local checks none).
func (s *Server) Config() aws.Config {
	return aws.Config{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(s.Endpoint),
		HTTPClient:   s.HTTPClient(),
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "kiln", SecretAccessKey: "kiln", Source: "kiln aws-local"}, nil
		}),
	}
}

// Stop stops the server (its data directory stays).
func (s *Server) Stop() {
	s.stopOnce.Do(func() {
		_ = s.tree.Stop()
		select {
		case <-s.exited:
		case <-time.After(10 * time.Second):
			_ = s.tree.Kill()
			<-s.exited
		}
		s.tree.Close()
		_ = s.lifeline.Release(s.cmd.Process.Pid)
		if s.netns != nil {
			s.netns.Close()
		}
	})
}
