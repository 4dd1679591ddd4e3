//go:build unix

package codebuild

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestRunAsOf(t *testing.T) {
	repo, err := os.ReadFile("../../../buildspec/buildspec.yml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, spec, want string
		err              bool
	}{
		{name: "kiln's buildspec", spec: string(repo), want: "kiln"},
		{name: "none: root", spec: "version: 0.2\nphases:\n  build:\n    commands: [kiln agent run]\n", want: ""},
		{name: "not YAML", spec: "run-as: [kiln\n", err: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := RunAsOf([]byte(tc.spec))
			if (err != nil) != tc.err || got != tc.want {
				t.Fatalf("RunAsOf = %q, %v; want %q (error %v)", got, err, tc.want, tc.err)
			}
		})
	}
}

// TestBuildsRunAsTheBuildspecsUser: as root, a project with a run-as runs each build's command as
// the uid Take holds for it (uid and gid, no root groups), in a work directory that uid owns and
// can write although the stand-in's directory is root's alone; the uid is given back when the
// build ends. Without a run-as the command runs as root; a uid that cannot be had fails the build.
func TestBuildsRunAsTheBuildspecsUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("switching users needs root")
	}
	const uid = 200977
	script := `echo "uid=$(id -u) gid=$(id -g) groups=$(id -G) user=$USER"; touch ./written && echo "owner=$(stat -c %u .) src=$CODEBUILD_SRC_DIR pwd=$PWD"`
	for _, tc := range []struct {
		name     string
		runAs    *RunAs
		status   string
		want     []string
		released int
	}{
		{name: "run-as kiln", runAs: &RunAs{User: "kiln"}, status: StatusSucceeded,
			want: []string{"uid=200977 gid=200977 groups=200977 user=kiln", "owner=200977"}, released: 1},
		{name: "no run-as: root", status: StatusSucceeded, want: []string{"uid=0 gid=0", "owner=0"}},
		{name: "no uid free", runAs: &RunAs{User: "kiln"}, status: StatusFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir() // 0700, root's
			released := 0
			if tc.runAs != nil {
				tc.runAs.Take = func() (int, func(), error) {
					if tc.status == StatusFailed {
						return 0, nil, errors.New("every build uid is in use")
					}
					return uid, func() { released++ }, nil
				}
			}
			s, err := New(Config{Project: "p", Command: []string{"sh", "-c", script}, Env: []string{"PATH=" + os.Getenv("PATH")},
				Dir: filepath.Join(dir, "builds"), RunAs: tc.runAs})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			b, err := s.start(startBuildInput{ProjectName: "p"})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if b, err = s.Wait(ctx, b.ID); err != nil || b.BuildStatus != tc.status {
				t.Fatalf("build ended %v %+v, want %s", err, b, tc.status)
			}
			log, _ := os.ReadFile(strings.TrimPrefix(b.Logs.DeepLink, "file://"))
			for _, w := range tc.want {
				if !strings.Contains(string(log), w) {
					t.Errorf("the build's output %q lacks %q", log, w)
				}
			}
			if tc.runAs != nil && tc.status == StatusSucceeded {
				src := between(string(log), "src=", " ")
				if pwd := between(string(log), "pwd=", "\n"); src == "" || pwd != src {
					t.Errorf("CODEBUILD_SRC_DIR %q, working directory %q: want the same", src, pwd)
				}
				if _, err := os.Stat(src); !os.IsNotExist(err) {
					t.Errorf("the build's work directory %s is left after it: %v", src, err)
				}
			}
			if released != tc.released {
				t.Errorf("the uid was given back %d times, want %d", released, tc.released)
			}
		})
	}
}

// between is the text of s after the first prefix, up to end.
func between(s, prefix, end string) string {
	_, after, ok := strings.Cut(s, prefix)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(after, end)
	return v
}
