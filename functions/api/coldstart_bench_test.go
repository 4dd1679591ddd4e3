package main

import (
	"encoding/base64"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
	"time"
)

// BenchmarkAPILambdaColdStart measures the API Lambda's init duration on this machine: from the
// process start to its first request for an event to the Lambda runtime API (what Lambda reports
// as Init Duration), with its configuration read and its master key fetched from a Secrets
// Manager stand-in. The baseline is the smallest Go Lambda, measured in the same run. It also
// reports the size of the binary as deployed (linux/arm64, -tags lambda.norpc, stripped as
// `make lambdas` builds it). Goals: binary < 25 MB, init < 150 ms.
//
//	go test -run '^$' -bench APILambdaColdStart -benchtime 20x ./functions/api/
func BenchmarkAPILambdaColdStart(b *testing.B) {
	dir := b.TempDir()
	api := buildLambda(b, ".", filepath.Join(dir, "api"), "")
	hello := buildLambda(b, "./testdata/hello", filepath.Join(dir, "hello"), "")
	deployed := buildLambda(b, ".", filepath.Join(dir, "api-arm64"), "arm64")
	secrets := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		key := base64.StdEncoding.EncodeToString(make([]byte, 32))
		_ = json.NewEncoder(w).Encode(map[string]any{"ARN": "arn:aws:secretsmanager:us-east-1:000000000000:secret:kiln-master",
			"Name": "kiln-master", "SecretString": key, "VersionId": "v1"})
	}))
	defer secrets.Close()
	env := append(os.Environ(), "KILN_DYNAMODB_TABLE=kiln", "KILN_MASTER_KEY_SECRET_ARN=arn:aws:secretsmanager:us-east-1:000000000000:secret:kiln-master",
		"AWS_ENDPOINT_URL_SECRETS_MANAGER="+secrets.URL, "AWS_REGION=us-east-1", "AWS_ACCESS_KEY_ID=k", "AWS_SECRET_ACCESS_KEY=s",
		"AWS_EC2_METADATA_DISABLED=true", "KILN_ENGINE_VERSIONS=5.3,5.4")
	var apiInit, helloInit []time.Duration
	for b.Loop() {
		apiInit = append(apiInit, initDuration(b, api, env))
		helloInit = append(helloInit, initDuration(b, hello, env))
	}
	st, err := os.Stat(deployed)
	if err != nil {
		b.Fatal(err)
	}
	a, h := median(apiInit), median(helloInit)
	b.ReportMetric(float64(a.Microseconds())/1000, "init-ms")
	b.ReportMetric(float64(h.Microseconds())/1000, "baseline-init-ms")
	b.ReportMetric(float64(a)/float64(h), "init-x-baseline")
	b.ReportMetric(float64(st.Size())/(1<<20), "binary-MB")
	b.Logf("API Lambda init p50 %v vs the smallest Go Lambda %v (×%.2f); deployed binary %.1f MB", a, h, float64(a)/float64(h), float64(st.Size())/(1<<20))
}

// buildLambda builds a Lambda binary as `make lambdas` does, for this machine or for arch.
func buildLambda(b *testing.B, pkg, out, arch string) string {
	b.Helper()
	cmd := exec.Command("go", "build", "-tags", "lambda.norpc", "-ldflags", "-s -w", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if arch != "" {
		cmd.Env = append(cmd.Env, "GOOS=linux", "GOARCH="+arch)
	}
	if msg, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("build %s: %v\n%s", pkg, err, msg)
	}
	return out
}

// initDuration starts a Lambda binary against a runtime API stand-in and returns the time until
// it asks for its first event.
func initDuration(b *testing.B, bin string, env []string) time.Duration {
	b.Helper()
	asked := make(chan time.Time, 1)
	rt := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case asked <- time.Now():
		default:
		}
		<-r.Context().Done() // hold the long poll until the process is gone
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = rt.Serve(ln) }()
	defer rt.Close()
	cmd := exec.Command(bin)
	cmd.Env = append(env, "AWS_LAMBDA_RUNTIME_API="+ln.Addr().String())
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	select {
	case at := <-asked:
		return at.Sub(start)
	case <-time.After(30 * time.Second):
		b.Fatalf("%s never asked for an event", filepath.Base(bin))
		return 0
	}
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}
