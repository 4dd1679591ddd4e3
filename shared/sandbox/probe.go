package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

// FixHint is how an operator makes builds run: the end of every "sandbox unavailable" reason.
const FixHint = "install bubblewrap on the build host (Debian/Ubuntu: apt-get install bubblewrap), " +
	"or, for a service that builds for one trusted studio only, set KILN_SANDBOX=off"

// Open finds bwrap (path, or "bwrap" in PATH when path is "") and checks that it can make a
// sandbox here: user namespaces may be turned off by the kernel or a container. When it cannot,
// it returns an Unavailable that fails builds with the cause and the fix, and the cause as error.
func Open(ctx context.Context, b Bubblewrap) (Confiner, error) {
	if err := Supported(runtime.GOOS); err != nil {
		return Unavailable{Reason: "build sandbox unavailable: " + err.Error()}, fmt.Errorf("sandbox: %w", err)
	}
	name := b.Path
	if name == "" {
		name = "bwrap"
	}
	found, err := exec.LookPath(name)
	if err != nil {
		reason := fmt.Sprintf("build sandbox unavailable: bwrap (bubblewrap) was not found on this build host; %s", FixHint)
		return Unavailable{Reason: reason}, fmt.Errorf("sandbox: %s not found: %w", name, err)
	}
	b.Path = found
	if err := b.probe(ctx); err != nil {
		reason := fmt.Sprintf("build sandbox unavailable: bwrap cannot create a sandbox on this build host (%v); %s", err, FixHint)
		return Unavailable{Reason: reason}, fmt.Errorf("sandbox: %s: %w", found, err)
	}
	return &b, nil
}

// Supported says whether bubblewrap can confine builds on goos: it needs Linux's namespaces.
func Supported(goos string) error {
	if goos != "linux" {
		return fmt.Errorf("the build sandbox (bubblewrap) needs Linux; on %s builds run only unconfined (KILN_SANDBOX=off), "+
			"for a service or agent that builds for one trusted studio", goos)
	}
	return nil
}

// probe runs /bin/true in a jail like a build's.
func (b *Bubblewrap) probe(ctx context.Context) error {
	dir, err := os.MkdirTemp("", "kiln-sandbox-probe-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	j := Jail{Writable: []string{dir}, Dir: dir, Home: dir, Tmp: dir}
	step, err := b.Prepare(j, "true")
	if err != nil {
		return err
	}
	defer step.Done()
	var out bytes.Buffer
	step.Cmd.Stdout, step.Cmd.Stderr = &out, &out
	if err := step.Start(step.Cmd.Start); err != nil {
		return err
	}
	closeAll(step.Cmd.ExtraFiles)
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
		case <-time.After(10 * time.Second):
		case <-done:
			return
		}
		step.Cmd.Process.Kill()
	}()
	err = step.Cmd.Wait()
	close(done)
	if err != nil {
		msg := strings.TrimSpace(out.String())
		if msg == "" {
			msg = err.Error()
		}
		return fmt.Errorf("%s", firstLine(msg))
	}
	return nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return strings.TrimPrefix(line, "bwrap: ")
}
