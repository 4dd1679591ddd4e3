// Package codebuild stands in for AWS CodeBuild on this machine (kiln aws-local): it answers
// StartBuild, StopBuild and BatchGetBuilds in CodeBuild's JSON 1.1 protocol, so the real AWS SDK
// client (and the Step Functions stand-in) talk to it through an endpoint override. A build runs
// the project's command (what the buildspec runs) as a child process in its own process group,
// with the build's environment overrides, its output going to a log file; StopBuild and the
// build's timeout kill the whole group.
package codebuild

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/kilnbuild/kiln/shared/awslocal/lifeline"
	"github.com/kilnbuild/kiln/shared/proctree"
)

// Build statuses, as CodeBuild names them.
const (
	StatusInProgress = "IN_PROGRESS"
	StatusSucceeded  = "SUCCEEDED"
	StatusFailed     = "FAILED"
	StatusStopped    = "STOPPED"
	StatusTimedOut   = "TIMED_OUT"
)

// Config is one CodeBuild project.
type Config struct {
	// Project is the project's name; StartBuild of another project is refused.
	Project string
	// Command is what a build runs (argv), as the project's buildspec would.
	Command []string
	// Env is the environment every build starts from (the image's); the build's overrides and
	// CODEBUILD_BUILD_ID are added.
	Env []string
	// Dir holds the builds' log files (<build uuid>.log) and is their working directory's parent.
	Dir string
	// Minute is how long a minute of TimeoutInMinutesOverride lasts (tests scale it down); 0: a
	// minute.
	Minute time.Duration
	// DefaultTimeoutMinutes is a build's timeout without an override (CodeBuild's default: 60).
	DefaultTimeoutMinutes int
	// MaxRunning is how many builds run at once (CodeBuild's concurrency limit); more wait in
	// the QUEUED phase. 0: no limit.
	MaxRunning int
	// Quota is the account's concurrent-builds quota: while Quota builds are in progress
	// (running or queued), StartBuild is refused with AccountLimitExceededException ("An AWS
	// service limit was exceeded for the calling AWS account", HTTP 400), the error CodeBuild's
	// StartBuild answers past the account's limits
	// (https://docs.aws.amazon.com/codebuild/latest/APIReference/API_StartBuild.html; the quotas:
	// https://docs.aws.amazon.com/codebuild/latest/userguide/limits.html). 0: no quota.
	// SetQuota changes it.
	Quota int
	// Lifeline ends the builds' processes when the stand-in's process ends, however it ends
	// (nil: none).
	Lifeline *lifeline.Lifeline
	// Parameters resolves the names of a build's PARAMETER_STORE variables to their decrypted
	// values, as CodeBuild does with the project's service role before the build runs (kiln
	// aws-local: GetParameters on the SSM stand-in, signed as the role and IAM-checked). A
	// failure, or no resolver, fails the build in its DOWNLOAD_SOURCE phase, as CodeBuild does.
	Parameters func(ctx context.Context, names []string) (map[string]string, error)
	// RunAs is the buildspec's run-as: the user each build's command runs as (nil: the
	// stand-in's own, as CodeBuild runs commands as root without one). See runas.go.
	RunAs  *RunAs
	Logger *slog.Logger
}

// Server is the stand-in. Close stops every build still running.
type Server struct {
	cfg    Config
	mu     sync.Mutex
	builds map[string]*build
	wg     sync.WaitGroup
	// running counts the builds admitted to run (at most MaxRunning); queue holds the others,
	// oldest first, as CodeBuild starts queued builds in order.
	running int
	queue   []*build
	// refused counts the StartBuilds refused for the quota.
	refused int
}

// SetQuota sets the account's concurrent-builds quota (Config.Quota; 0: none).
func (s *Server) SetQuota(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg.Quota = n
}

// Refused is how many StartBuilds the quota refused.
func (s *Server) Refused() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refused
}

// build is one build and its process.
type build struct {
	Build
	cmd     *exec.Cmd
	tree    *proctree.Tree // the command and what it starts
	started bool           // its command runs (or ran)
	stopped bool           // StopBuild asked for it
	timeout bool
	done    chan struct{}
	// admitted is closed when the build may run; dequeued when it was stopped while queued.
	admitted, dequeued chan struct{}
}

// New makes a stand-in for the project cfg describes.
func New(cfg Config) (*Server, error) {
	if cfg.Project == "" || len(cfg.Command) == 0 || cfg.Dir == "" {
		return nil, errors.New("codebuild: a project needs a name, a command and a directory")
	}
	if cfg.Minute <= 0 {
		cfg.Minute = time.Minute
	}
	if cfg.DefaultTimeoutMinutes <= 0 {
		cfg.DefaultTimeoutMinutes = 60
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("codebuild: %w", err)
	}
	return &Server{cfg: cfg, builds: map[string]*build{}}, nil
}

// Build is a build as BatchGetBuilds answers it (the fields kiln reads).
type Build struct {
	ID               string           `json:"id"`
	Arn              string           `json:"arn"`
	ProjectName      string           `json:"projectName"`
	BuildStatus      string           `json:"buildStatus"`
	CurrentPhase     string           `json:"currentPhase"`
	BuildComplete    bool             `json:"buildComplete"`
	StartTime        float64          `json:"startTime"`
	EndTime          float64          `json:"endTime,omitempty"`
	TimeoutInMinutes int              `json:"timeoutInMinutes"`
	Environment      BuildEnvironment `json:"environment"`
	Logs             BuildLogs        `json:"logs"`
}

// BuildEnvironment names the build's image and, as CodeBuild answers, its environment
// variables with the overrides of StartBuild.
type BuildEnvironment struct {
	Image                string                `json:"image"`
	Type                 string                `json:"type"`
	EnvironmentVariables []EnvironmentVariable `json:"environmentVariables,omitempty"`
}

// BuildLogs says where the build's output is (a file here, CloudWatch Logs in AWS).
type BuildLogs struct {
	DeepLink string `json:"deepLink"`
}

// EnvironmentVariable is one environment variable override.
type EnvironmentVariable struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	Type  string `json:"type,omitempty"`
}

// start runs a build of the project.
func (s *Server) start(in startBuildInput) (Build, error) {
	if in.ProjectName != s.cfg.Project {
		return Build{}, &apiError{status: http.StatusBadRequest, Type: "ResourceNotFoundException", Message: "Project cannot be found: " + in.ProjectName}
	}
	minutes := s.cfg.DefaultTimeoutMinutes
	if in.TimeoutInMinutesOverride != nil {
		if m := *in.TimeoutInMinutesOverride; m < 5 || m > 2160 {
			return Build{}, &apiError{status: http.StatusBadRequest, Type: "InvalidInputException", Message: "timeoutInMinutesOverride must be from 5 to 2160"}
		} else {
			minutes = m
		}
	}
	var raw [16]byte
	rand.Read(raw[:])
	uuid := hex.EncodeToString(raw[:])
	id := s.cfg.Project + ":" + uuid
	logPath := filepath.Join(s.cfg.Dir, uuid+".log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o600)
	if err != nil {
		return Build{}, fmt.Errorf("codebuild: %w", err)
	}
	work := filepath.Join(s.cfg.Dir, uuid)
	if err := os.Mkdir(work, 0o700); err != nil {
		logFile.Close()
		return Build{}, fmt.Errorf("codebuild: %w", err)
	}
	cmd := exec.Command(s.cfg.Command[0], s.cfg.Command[1:]...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = work, logFile, logFile
	cmd.Env = append(append([]string{}, s.cfg.Env...), "CODEBUILD_BUILD_ID="+id, "CODEBUILD_BUILD_IMAGE="+in.ImageOverride, "CODEBUILD_SRC_DIR="+work)
	for _, v := range in.EnvironmentVariablesOverride {
		if v.Type != typeParameterStore { // resolved when the build runs (parameterEnv)
			cmd.Env = append(cmd.Env, v.Name+"="+v.Value)
		}
	}
	s.cfg.Lifeline.Mark(cmd)
	b := &build{Build: Build{ID: id, Arn: "arn:aws:codebuild:local:000000000000:build/" + id, ProjectName: s.cfg.Project,
		BuildStatus: StatusInProgress, CurrentPhase: "QUEUED", StartTime: epoch(time.Now()), TimeoutInMinutes: minutes,
		Environment: BuildEnvironment{Image: in.ImageOverride, Type: "LINUX_CONTAINER", EnvironmentVariables: in.EnvironmentVariablesOverride}, Logs: BuildLogs{DeepLink: "file://" + logPath}},
		cmd: cmd, tree: proctree.New(cmd, proctree.Options{}), done: make(chan struct{}), admitted: make(chan struct{}), dequeued: make(chan struct{})}
	s.mu.Lock()
	defer s.mu.Unlock()
	if inProgress := s.running + len(s.queue); s.cfg.Quota > 0 && inProgress >= s.cfg.Quota {
		logFile.Close()
		os.Remove(logPath)
		os.Remove(work)
		s.refused++
		return Build{}, &apiError{status: http.StatusBadRequest, Type: "AccountLimitExceededException",
			Message: fmt.Sprintf("Cannot have more than %d builds in queue for the account", s.cfg.Quota)}
	}
	s.builds[id] = b
	if s.cfg.MaxRunning <= 0 || s.running < s.cfg.MaxRunning {
		s.running++
		close(b.admitted)
	} else {
		s.queue = append(s.queue, b)
	}
	s.wg.Add(1)
	go s.run(b, minutes, logFile)
	s.cfg.Logger.Info("codebuild build queued", slog.String("codebuild_id", id), slog.String("log", logPath))
	return b.Build, nil
}

// run runs a build once a slot is free (MaxRunning), as CodeBuild queues builds beyond the
// account's concurrency, and records how it ended.
func (s *Server) run(b *build, minutes int, logFile *os.File) {
	defer s.wg.Done()
	defer logFile.Close()
	select {
	case <-b.admitted:
		defer s.release()
	case <-b.dequeued: // stopped while queued
	}
	env, perr := s.parameterEnv(b.Environment.EnvironmentVariables)
	s.mu.Lock()
	if b.stopped {
		s.end(b, StatusStopped)
		s.mu.Unlock()
		return
	}
	if perr != nil {
		fmt.Fprintf(logFile, "Decrypting parameter store environment variables\nPhase complete: DOWNLOAD_SOURCE State: FAILED\nPhase context status code: Decrypted Variables Error Message: %v\n", perr)
		s.cfg.Logger.Error("codebuild build failed: its parameter store variables", slog.String("codebuild_id", b.ID), slog.String("error", perr.Error()))
		s.end(b, StatusFailed)
		s.mu.Unlock()
		return
	}
	b.cmd.Env = append(b.cmd.Env, env...)
	releaseUser, err := s.cfg.RunAs.apply(b.cmd)
	if err == nil {
		if err = b.tree.Start(); err != nil {
			releaseUser()
		}
	}
	if err != nil {
		s.cfg.Logger.Error("codebuild: start the build's command", slog.String("codebuild_id", b.ID), slog.String("error", err.Error()))
		s.end(b, StatusFailed)
		s.mu.Unlock()
		return
	}
	b.started, b.CurrentPhase = true, "BUILD"
	if err := s.cfg.Lifeline.Hold(b.cmd.Process.Pid); err != nil {
		s.cfg.Logger.Warn("codebuild: the build's process outlives a crash", slog.String("codebuild_id", b.ID), slog.String("error", err.Error()))
	}
	s.mu.Unlock()
	s.cfg.Logger.Info("codebuild build started", slog.String("codebuild_id", b.ID))
	timer := time.AfterFunc(time.Duration(minutes)*s.cfg.Minute, func() { s.kill(b, func() { b.timeout = true }) })
	err = b.cmd.Wait()
	timer.Stop()
	_ = b.tree.Kill() // what the command left behind goes with it
	b.tree.Close()
	_ = s.cfg.Lifeline.Release(b.cmd.Process.Pid)
	releaseUser()
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case b.stopped:
		s.end(b, StatusStopped)
	case b.timeout:
		s.end(b, StatusTimedOut)
	case err == nil:
		s.end(b, StatusSucceeded)
	default:
		s.end(b, StatusFailed)
	}
}

// typeParameterStore is the type of an environment variable whose value names a Parameter
// Store parameter.
const typeParameterStore = "PARAMETER_STORE"

// parameterEnv resolves the PARAMETER_STORE variables of a build to NAME=value entries.
func (s *Server) parameterEnv(vars []EnvironmentVariable) ([]string, error) {
	var names []string
	for _, v := range vars {
		if v.Type == typeParameterStore {
			names = append(names, v.Value)
		}
	}
	if len(names) == 0 {
		return nil, nil
	}
	if s.cfg.Parameters == nil {
		return nil, errors.New("the stand-in has no parameter store to resolve PARAMETER_STORE variables")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	values, err := s.cfg.Parameters(ctx, names)
	if err != nil {
		return nil, err
	}
	var env []string
	for _, v := range vars {
		if v.Type != typeParameterStore {
			continue
		}
		value, ok := values[v.Value]
		if !ok {
			return nil, fmt.Errorf("parameter does not exist: %s", v.Value)
		}
		env = append(env, v.Name+"="+value)
	}
	return env, nil
}

// release frees a running build's place and admits the oldest queued build.
func (s *Server) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.running--
	if len(s.queue) > 0 {
		next := s.queue[0]
		s.queue = s.queue[1:]
		s.running++
		close(next.admitted)
	}
}

// end records a build's end; the caller holds the lock.
func (s *Server) end(b *build, status string) {
	b.BuildStatus, b.CurrentPhase, b.BuildComplete, b.EndTime = status, "COMPLETED", true, epoch(time.Now())
	s.cfg.Logger.Info("codebuild build ended", slog.String("codebuild_id", b.ID), slog.String("status", status))
	close(b.done)
}

// kill kills a running build's process group, noting why (mark runs under the lock).
func (s *Server) kill(b *build, mark func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b.BuildComplete {
		return
	}
	mark()
	if b.started {
		_ = b.tree.Kill()
		return
	}
	if i := slices.Index(s.queue, b); i >= 0 { // still queued: it leaves the queue
		s.queue = slices.Delete(s.queue, i, i+1)
		close(b.dequeued)
	} // admitted but not started yet: run sees stopped
}

// stop stops a build; a build that already ended is answered as it is.
func (s *Server) stop(id string) (Build, error) {
	s.mu.Lock()
	b := s.builds[id]
	s.mu.Unlock()
	if b == nil {
		return Build{}, &apiError{status: http.StatusBadRequest, Type: "ResourceNotFoundException", Message: "Build not found: " + id}
	}
	s.kill(b, func() { b.stopped = true })
	<-b.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return b.Build, nil
}

// get answers builds by id.
func (s *Server) get(ids []string) (found []Build, missing []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	found = []Build{}
	for _, id := range ids {
		if b := s.builds[id]; b != nil {
			found = append(found, b.Build)
		} else {
			missing = append(missing, id)
		}
	}
	return found, missing
}

// Close stops every build still running and waits for their processes.
func (s *Server) Close() error {
	s.mu.Lock()
	running := []*build{}
	for _, b := range s.builds {
		running = append(running, b)
	}
	s.mu.Unlock()
	for _, b := range running {
		s.kill(b, func() { b.stopped = true })
	}
	s.wg.Wait()
	return nil
}

// Wait waits for a build to end (tests).
func (s *Server) Wait(ctx context.Context, id string) (Build, error) {
	s.mu.Lock()
	b := s.builds[id]
	s.mu.Unlock()
	if b == nil {
		return Build{}, fmt.Errorf("codebuild: no build %s", id)
	}
	select {
	case <-b.done:
	case <-ctx.Done():
		return Build{}, ctx.Err()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return b.Build, nil
}

func epoch(t time.Time) float64 { return float64(t.UnixMilli()) / 1000 }
