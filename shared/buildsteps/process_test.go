package buildsteps

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// groupMembers lists the live (not zombie) processes of a process group.
func groupMembers(t *testing.T, pgid int) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("no /proc")
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses.
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(fields) > 2 && fields[0] != "Z" && fields[2] == strconv.Itoa(pgid) {
			out = append(out, pid)
		}
	}
	return out
}

func TestBuildCancelKillsTheProcessGroup(t *testing.T) {
	t.Parallel()
	runUAT := installRunUAT(t)
	// The pid file is in the workspace: a build run as a build uid (kiln as root) writes only there.
	dir := writeProject(t, "")
	pidfile := filepath.Join(dir, "pids")
	if err := os.WriteFile(filepath.Join(dir, "FakeUAT.env"), []byte("FAKE_UAT_SLEEP=60\nFAKE_UAT_PIDFILE="+pidfile+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := &recorder{}
	done := make(chan error, 1)
	go func() {
		_, err := (&Steps{}).Build(ctx, BuildInput{ProjectDir: dir, UprojectPath: "Shooter.uproject", Platform: kiln.PlatformLinux,
			BuildType: kiln.BuildTypeDevelopment, RunUAT: runUAT, ArchiveDir: t.TempDir()}, rec)
		done <- err
	}()

	// Wait for RunUAT and its sleeping child.
	var pids []int
	for deadline := time.Now().Add(10 * time.Second); len(pids) < 2; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("RunUAT did not start its child; log:\n%s", rec.text())
		}
		data, _ := os.ReadFile(pidfile)
		pids = nil
		for _, f := range strings.Fields(string(data)) {
			pid, _ := strconv.Atoi(f)
			pids = append(pids, pid)
		}
	}
	leader := pids[0]
	if got := groupMembers(t, leader); len(got) < 2 {
		t.Fatalf("group %d has members %v, want RunUAT and its child", leader, got)
	}

	cancel()
	start := time.Now()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err %v, want context.Canceled", err)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("Build took %v to return after cancellation", d)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("Build did not return after cancellation")
	}
	var alive []int
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if alive = groupMembers(t, leader); len(alive) == 0 {
			break
		}
	}
	if len(alive) > 0 {
		t.Errorf("processes %v of the group survived", alive)
	}
	if slices.Contains(rec.stages, StageCook) {
		t.Errorf("stages %v: the build went on after cancellation", rec.stages)
	}
}

func TestBuildKillsLeftovers(t *testing.T) {
	t.Parallel()
	// A RunUAT that succeeds but leaves a worker behind, holding its output open.
	engine := filepath.Join(t.TempDir(), "RunUAT.sh")
	project := writeProject(t, "")
	pidfile := filepath.Join(project, "worker") // in the workspace, which the build may write
	script := `#!/bin/bash
for a; do case $a in -archivedirectory=*) archive=${a#*=} ;; esac; done
sleep 60 &
echo $! >` + pidfile + `
mkdir -p "$archive/Linux" && echo done
`
	if err := os.WriteFile(engine, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	rec := &recorder{}
	bo, err := (&Steps{}).Build(context.Background(), BuildInput{ProjectDir: project, UprojectPath: "Shooter.uproject",
		Platform: kiln.PlatformLinux, BuildType: kiln.BuildTypeDevelopment, RunUAT: engine, ArchiveDir: t.TempDir()}, rec)
	if err != nil || filepath.Base(bo.StagedDir) != "Linux" {
		t.Fatalf("%+v, %v\n%s", bo, err, rec.text())
	}
	if d := time.Since(start); d > drainWait {
		t.Errorf("Build took %v: it waited for the leftover worker", d)
	}
	data, _ := os.ReadFile(pidfile)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
		if err != nil || strings.Contains(string(stat[bytes.LastIndexByte(stat, ')')+1:]), " Z ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the leftover worker %d survived", pid)
		}
	}
}
