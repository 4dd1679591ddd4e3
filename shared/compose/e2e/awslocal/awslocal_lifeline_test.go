//go:build linux

package awslocal

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/awslocal/lifeline"
	"github.com/kilnbuild/kiln/shared/compose/awslocalapp"
	"github.com/kilnbuild/kiln/shared/compose/e2e"
	"github.com/kilnbuild/kiln/shared/proctree/proctest"
	"github.com/kilnbuild/kiln/shared/syncbuf"
)

// TestKilledAWSLocalLeavesNoProcess starts `kiln aws-local` (the binary the hosts run) as a real
// process, SIGKILLs it once it serves, and checks that within seconds nothing it started is
// left: not DynamoDB Local's JVM, not MinIO, not the Step Functions node process.
func TestKilledAWSLocalLeavesNoProcess(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(e2e.KilnBinary(t), "aws-local")
	cmd.Env = append(os.Environ(), "KILN_ADDR=127.0.0.1:0", "KILN_LAMBDA_ADDR=127.0.0.1:0", "KILN_DATA="+t.TempDir(),
		awslocalapp.TemplateEnv+"="+e2e.StackTemplateFile(t))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	serving := make(chan bool, 1)
	var log syncbuf.Buffer
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			log.Write(append(sc.Bytes(), '\n'))
			if strings.Contains(sc.Text(), `msg="kiln aws-local serving"`) {
				serving <- true
			}
		}
		close(serving)
	}()
	select {
	case ok := <-serving:
		if !ok {
			t.Fatalf("kiln aws-local exited before it served:\n%s", log.String())
		}
	case <-time.After(5 * time.Minute):
		t.Fatalf("kiln aws-local did not serve within 5 minutes:\n%s", log.String())
	}

	started := descendants(cmd.Process.Pid)
	names := map[string]bool{}
	var marker string
	for _, pid := range started {
		names[procComm(pid)] = true
		if m := procMarker(pid); m != "" {
			marker = m
		}
	}
	for _, want := range []string{"java", "minio", "node"} {
		if !names[want] {
			t.Fatalf("no %s among the processes kiln aws-local started: %v", want, names)
		}
	}
	if marker == "" {
		t.Fatal("the processes kiln aws-local started carry no lifeline marker")
	}
	started = append(started, marked(marker)...)

	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var left []string
		for _, pid := range started {
			if proctest.Alive(pid) {
				left = append(left, strconv.Itoa(pid)+" "+procComm(pid))
			}
		}
		for _, pid := range marked(marker) {
			if proctest.Alive(pid) {
				left = append(left, strconv.Itoa(pid)+" "+procComm(pid)+" (marked)")
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, pid := range append(started, marked(marker)...) { // leave nothing behind for the next tests
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			t.Fatalf("10 s after kiln aws-local was SIGKILLed, these processes it started remain: %v", left)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func procComm(pid int) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	return strings.TrimSpace(string(b))
}

// procMarker is the lifeline marker in a process's environment ("" if none).
func procMarker(pid int) string {
	env, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	for _, kv := range bytes.Split(env, []byte{0}) {
		if bytes.HasPrefix(kv, []byte(lifeline.MarkerVar+"=")) {
			return string(kv)
		}
	}
	return ""
}

// descendants are the live processes under pid.
func descendants(root int) []int {
	parent := map[int]int{}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		pid, _ := strconv.Atoi(filepath.Base(d))
		if f := proctest.Stat(pid); len(f) > 1 {
			parent[pid], _ = strconv.Atoi(f[1])
		}
	}
	var out []int
	for pid := range parent {
		for p := parent[pid]; p > 1; p = parent[p] {
			if p == root {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}

// marked are the live processes whose environment carries marker.
func marked(marker string) []int {
	var out []int
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		pid, _ := strconv.Atoi(filepath.Base(d))
		if procMarker(pid) == marker && proctest.Alive(pid) {
			out = append(out, pid)
		}
	}
	return out
}
