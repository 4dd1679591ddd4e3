// Package stepfunctions starts and stops the Step Functions stand-in of kiln aws-local: a Node
// process (aws-local-stepfunctions running the builds' state machine) that answers the Step
// Functions API on 127.0.0.1 (StartExecution, StopExecution, DescribeExecution,
// GetExecutionHistory, SendTaskHeartbeat, SendTaskSuccess, SendTaskFailure; every execution has a
// task token, a task state with HeartbeatSeconds is held to it, and an execution to the history
// quota), calls its Lambda tasks
// through the Lambda stand-in and its CodeBuild task through the CodeBuild stand-in.
package stepfunctions

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	awslocal "github.com/kilnbuild/kiln/scripts/aws-local"
	"github.com/kilnbuild/kiln/shared/awslocal/lifeline"
	"github.com/kilnbuild/kiln/shared/proctree"
)

// Options say what the stand-in runs and whom it calls.
type Options struct {
	// Node is the node binary (Node 20 or later); "" is "node" on PATH.
	Node string
	// Prefix is where aws-local-stepfunctions is installed (npm --prefix; the tests' is
	// <repo>/.cache/stepfunctions-local, see scripts/install-stepfunctions-local.sh).
	Prefix string
	// Definition is the state machine's ASL with its placeholders filled (see Fill).
	Definition string
	// StateMachineARN is the ARN the stand-in answers for (arn:aws:states:<region>:<account>:stateMachine:<name>).
	StateMachineARN string
	// LambdaEndpoint and CodeBuildEndpoint are the stand-ins' base URLs (http://127.0.0.1:port).
	LambdaEndpoint, CodeBuildEndpoint string
	// EndedFunction is the function told of executions that ended FAILED, TIMED_OUT or ABORTED.
	EndedFunction string
	// AccessKeyID is the state machine role's access key id, which the stand-in's calls of its
	// service integrations (Lambda, CodeBuild) are signed with; EventsAccessKeyID is
	// EventBridge's, which invokes the ended function. "" signs nothing.
	AccessKeyID, EventsAccessKeyID string
	// PollInterval is how often a running CodeBuild build is looked at; 0 is a second.
	PollInterval time.Duration
	// HeartbeatTimeout, for tests, replaces the HeartbeatSeconds of every state of the
	// definition; 0 keeps the definition's.
	HeartbeatTimeout time.Duration
	// MaxHistoryEvents is an execution's history quota: an execution whose history reaches it
	// fails with States.Runtime, as in AWS (0: Step Functions' 25,000, DefaultMaxHistoryEvents).
	MaxHistoryEvents int
	// Dir holds the script and the definition while it runs.
	Dir string
	// Log gets the process's error output; nil discards it.
	Log io.Writer
	// Lifeline ends the process when its parent ends, however it ends (nil: none).
	Lifeline *lifeline.Lifeline
	// Transitions, if set, is told of each execution's state transitions (every state it
	// entered, retries included) once the execution ends.
	Transitions func(executionARN string, transitions int)
}

// DefaultMaxHistoryEvents is Step Functions' quota of events in one execution's history:
// "Execution history: 25,000 events in a single state machine execution history. If the
// execution history reaches this quota, the execution fails"
// (https://docs.aws.amazon.com/step-functions/latest/dg/service-quotas.html, quotas related to
// state machine executions).
const DefaultMaxHistoryEvents = 25_000

// Server is the running stand-in.
type Server struct {
	endpoint string
	cmd      *exec.Cmd
	tree     *proctree.Tree
	lifeline *lifeline.Lifeline
	stdin    io.WriteCloser
	done     chan struct{}
}

// Fill fills the definition's ${Name} placeholders.
func Fill(definition string, values map[string]string) string {
	for name, v := range values {
		definition = strings.ReplaceAll(definition, "${"+name+"}", v)
	}
	return definition
}

// Start starts the stand-in and returns once it listens. The caller stops it with Close.
func Start(ctx context.Context, o Options) (*Server, error) {
	module := filepath.Join(o.Prefix, "node_modules", "aws-local-stepfunctions", "build", "main.node.esm.js")
	if _, err := os.Stat(module); err != nil {
		return nil, fmt.Errorf("stepfunctions: aws-local-stepfunctions is not installed under %s (scripts/install-stepfunctions-local.sh): %w", o.Prefix, err)
	}
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("stepfunctions: %w", err)
	}
	script, definition := filepath.Join(o.Dir, "stepfunctions.mjs"), filepath.Join(o.Dir, "definition.asl.json")
	if err := os.WriteFile(script, awslocal.StepFunctions, 0o600); err != nil {
		return nil, fmt.Errorf("stepfunctions: %w", err)
	}
	if err := os.WriteFile(definition, []byte(o.Definition), 0o600); err != nil {
		return nil, fmt.Errorf("stepfunctions: %w", err)
	}
	cmd := exec.Command(cmp.Or(o.Node, "node"), script)
	tree := proctree.New(cmd, proctree.Options{})
	cmd.Stderr = o.Log
	if cmd.Stderr == nil {
		cmd.Stderr = io.Discard
	}
	cmd.Env = append(os.Environ(),
		"KILN_SFN_MODULE="+module, "KILN_SFN_DEFINITION="+definition, "KILN_SFN_STATE_MACHINE_ARN="+o.StateMachineARN,
		"KILN_SFN_LAMBDA_ENDPOINT="+o.LambdaEndpoint, "KILN_SFN_CODEBUILD_ENDPOINT="+o.CodeBuildEndpoint,
		"KILN_SFN_ENDED_FUNCTION="+o.EndedFunction, "KILN_SFN_ACCESS_KEY_ID="+o.AccessKeyID, "KILN_SFN_EVENTS_ACCESS_KEY_ID="+o.EventsAccessKeyID,
		"KILN_SFN_POLL_MS="+strconv.FormatInt(cmp.Or(o.PollInterval, time.Second).Milliseconds(), 10),
		"KILN_SFN_HEARTBEAT_MS="+strconv.FormatInt(o.HeartbeatTimeout.Milliseconds(), 10),
		"KILN_SFN_MAX_HISTORY="+strconv.Itoa(cmp.Or(o.MaxHistoryEvents, DefaultMaxHistoryEvents)))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	o.Lifeline.Mark(cmd)
	if err := tree.Start(); err != nil {
		return nil, fmt.Errorf("stepfunctions: start node: %w", err)
	}
	s := &Server{cmd: cmd, tree: tree, lifeline: o.Lifeline, stdin: stdin, done: make(chan struct{})}
	if err := o.Lifeline.Hold(cmd.Process.Pid); err != nil {
		_ = tree.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("stepfunctions: %w", err)
	}
	port := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if p, ok := strings.CutPrefix(sc.Text(), "listening "); ok {
				port <- p
			} else if arn, n, ok := transitions(sc.Text()); ok && o.Transitions != nil {
				o.Transitions(arn, n)
			}
		}
		close(port)
	}()
	go func() { cmd.Wait(); close(s.done) }()
	select {
	case p, ok := <-port:
		if !ok {
			s.Close()
			return nil, errors.New("stepfunctions: the stand-in exited before it listened (see its log)")
		}
		s.endpoint = "http://127.0.0.1:" + p
		return s, nil
	case <-ctx.Done():
		s.Close()
		return nil, ctx.Err()
	}
}

// transitions reads a "transitions <execution ARN> <count>" line of the stand-in.
func transitions(line string) (string, int, bool) {
	rest, ok := strings.CutPrefix(line, "transitions ")
	if !ok {
		return "", 0, false
	}
	arn, count, ok := strings.Cut(rest, " ")
	n, err := strconv.Atoi(count)
	if !ok || err != nil || n < 0 {
		return "", 0, false
	}
	return arn, n, true
}

// Endpoint is the stand-in's base URL, for AWS_ENDPOINT_URL_SFN or the SDK's BaseEndpoint.
func (s *Server) Endpoint() string { return s.endpoint }

// closeGrace is how long the stand-in may take to abort its executions before it is killed.
const closeGrace = 10 * time.Second

// Close stops the stand-in: it aborts its running executions (stopping their CodeBuild builds
// and telling the ended function), then exits; what is left of its process group is killed.
func (s *Server) Close() error {
	s.stdin.Close()
	select {
	case <-s.done:
	case <-time.After(closeGrace):
	}
	_ = s.tree.Kill()
	<-s.done
	s.tree.Close()
	_ = s.lifeline.Release(s.cmd.Process.Pid)
	return nil
}
