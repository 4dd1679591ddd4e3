// Package buildsteps holds the steps of one build: check out a project's source, run the Unreal
// Engine's RunUAT.sh BuildCookRun on it and store the staged build as the artifact. One-machine kiln runs
// it in-process; the AWS build hosts run the same steps. It knows nothing of the server, the store
// or HTTP: it reports progress through a Reporter, and each step is a method with a plain struct
// input and output, so that a caller (the in-process workflow, a Step Functions task) can run the
// steps one by one.
//
// A step that fails for a reason the customer should see returns a *Failure; any other error
// (invalid input, the context ending) is the caller's to handle.
package buildsteps

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/kilnbuild/kiln/shared/artifacts"
	"github.com/kilnbuild/kiln/shared/sandbox"
)

// Stage is a stage of a build, as the build log and the API show it.
type Stage string

const (
	StageSync    Stage = "sync"    // checking out the source
	StageCompile Stage = "compile" // RunUAT's BUILD command
	StageCook    Stage = "cook"    // RunUAT's COOK command
	StageStage   Stage = "stage"   // RunUAT's STAGE command
	StagePackage Stage = "package" // RunUAT's PACKAGE and ARCHIVE commands
	StageUpload  Stage = "upload"  // storing the artifact
)

// Level is the level of a log line: the logLines levels of the API.
type Level string

const (
	LevelInfo  Level = "info"
	LevelWarn  Level = "warn"
	LevelError Level = "error"
)

// LogLine is one line of a build's log.
type LogLine struct {
	Time    time.Time
	Level   Level
	Message string
}

// Reporter receives a build's progress. A step calls it from one goroutine at a time; a step's
// lines arrive in order. Implementations should be quick: the engine's output waits for them.
type Reporter interface {
	// Stage says the build entered stage s.
	Stage(ctx context.Context, s Stage)
	// Log adds a line to the build's log.
	Log(ctx context.Context, l LogLine)
}

// Steps runs the steps of builds. The zero value needs only Artifacts (for Package).
type Steps struct {
	// Artifacts stores packaged builds.
	Artifacts artifacts.Store
	// Git is the git binary; "" means "git" found in PATH.
	Git string
	// Logger receives operational logs (never secrets); nil discards them.
	Logger *slog.Logger
	// Sandbox confines RunUAT, which runs the customer's code; nil runs it unconfined
	// (sandbox.Unconfined), which only a host that builds for one trusted studio may do.
	Sandbox sandbox.Confiner
	// Limits, if set, runs each build's engine step in a resource group of its own; nil runs it
	// without limits.
	Limits Limits
}

func (a *Steps) confiner() sandbox.Confiner {
	if a.Sandbox != nil {
		return a.Sandbox
	}
	return sandbox.Unconfined{}
}

// Failure is a step's failure with a reason written for the customer: the caller records Reason as
// the build's failureReason and keeps Err for its own logs.
type Failure struct {
	Stage  Stage
	Reason string
	Err    error
}

func (f *Failure) Error() string {
	if f.Err != nil {
		return fmt.Sprintf("agent: %s: %s: %v", f.Stage, f.Reason, f.Err)
	}
	return fmt.Sprintf("agent: %s: %s", f.Stage, f.Reason)
}

func (f *Failure) Unwrap() error { return f.Err }

func (a *Steps) logger() *slog.Logger {
	if a.Logger != nil {
		return a.Logger
	}
	return slog.New(slog.DiscardHandler)
}

func (a *Steps) git() string {
	if a.Git != "" {
		return a.Git
	}
	return "git"
}

// logf adds a line to the build log.
func logf(ctx context.Context, r Reporter, level Level, format string, args ...any) {
	r.Log(ctx, LogLine{Time: timeNow(), Level: level, Message: fmt.Sprintf(format, args...)})
}

func timeNow() time.Time { return time.Now().UTC() }

// fail reports a failure's reason in the build log and returns it.
func fail(ctx context.Context, r Reporter, stage Stage, err error, format string, args ...any) *Failure {
	f := &Failure{Stage: stage, Reason: fmt.Sprintf(format, args...), Err: err}
	logf(ctx, r, LevelError, "%s", f.Reason)
	return f
}
