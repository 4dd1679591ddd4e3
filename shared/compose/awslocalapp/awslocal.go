// Package awslocalapp is kiln aws-local's composition root: the AWS deployment's code paths on
// this machine — the Lambdas' handlers (composed by awsapp) behind the stand-ins of API Gateway,
// the Lambda Invoke API, Step Functions, CodeBuild, SQS, Parameter Store and the hosted Windows
// hosts, on DynamoDB Local and MinIO, every AWS call checked against the stack's IAM policies.
// It runs with kiln serve's settings (Settings) but none of kiln serve's composition.
package awslocalapp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	awscodebuild "github.com/aws/aws-sdk-go-v2/service/codebuild"
	awssfn "github.com/aws/aws-sdk-go-v2/service/sfn"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/kilnbuild/kiln/shared/awslocal/apigateway"
	"github.com/kilnbuild/kiln/shared/awslocal/apigateway/websocket"
	"github.com/kilnbuild/kiln/shared/awslocal/codebuild"
	"github.com/kilnbuild/kiln/shared/awslocal/ec2hosts"
	"github.com/kilnbuild/kiln/shared/awslocal/iam"
	"github.com/kilnbuild/kiln/shared/awslocal/lambdas"
	"github.com/kilnbuild/kiln/shared/awslocal/lifeline"
	"github.com/kilnbuild/kiln/shared/awslocal/repodeps"
	"github.com/kilnbuild/kiln/shared/awslocal/sqs"
	"github.com/kilnbuild/kiln/shared/awslocal/ssm"
	"github.com/kilnbuild/kiln/shared/awslocal/stepfunctions"
	"github.com/kilnbuild/kiln/shared/builds"
	"github.com/kilnbuild/kiln/shared/compose/awsapp"
	"github.com/kilnbuild/kiln/shared/compose/onemachine"
	"github.com/kilnbuild/kiln/shared/engines"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/outbound"
	"github.com/kilnbuild/kiln/shared/store"
	"github.com/kilnbuild/kiln/shared/wake"
	"github.com/kilnbuild/kiln/shared/workflow/sfn"
)

// Names of the AWS resources kiln aws-local stands in for (as the CDK stack names their kind).
const (
	Region               = "us-east-1"
	awsLocalAccount      = "000000000000"
	awsLocalHostProject  = "kiln-hosts"
	StateMachineARN      = "arn:aws:states:" + Region + ":" + awsLocalAccount + ":stateMachine:kiln-builds"
	awsLocalTaskFunction = "arn:aws:lambda:" + Region + ":" + awsLocalAccount + ":function:task"
	awsLocalQueueARN     = "arn:aws:sqs:" + Region + ":" + awsLocalAccount + ":kiln-deliveries"
)

// AWSLocal is a running `kiln aws-local`: the AWS deployment's code paths on this machine. The
// API is the API Lambda's handler behind an API Gateway stand-in; builds are executions of the
// state machine's definition on aws-local-stepfunctions whose tasks invoke the task Lambda's
// handler, and whose hosts are `kiln agent run` processes started by a CodeBuild stand-in, with
// the per-build credential a CodeBuild host gets; DynamoDB Local and MinIO hold the data;
// deliveries go through an SQS stand-in to the deliver Lambda's handler, and a ticker invokes the
// schedule Lambda's handler every minute.
type AWSLocal struct {
	url       string
	logger    *slog.Logger
	lock      *onemachine.DataLock
	backend   *awsBackends
	iam       *awsIAM
	servers   []*http.Server
	hosts     *codebuild.Server
	params    *ssm.Server    // the hosts' credentials (Parameter Store)
	winHost   *ec2hosts.Pool // nil without Options.EC2HostCommand or Windows hosts in the template
	linuxHost *ec2hosts.Pool // nil without Options.EC2HostCommand or Linux hosts in the template
	machine   *stepfunctions.Server
	queue     *sqs.Queue
	// live is the WebSocket API of live build events.
	live *websocket.Gateway
	// hostLogs is the API function's host API log writer (LogWriter).
	hostLogs builds.LogWriter
	// functions answer the Lambda Invoke API for every function, on Options.LambdaAddr.
	functions *lambdas.Server
	lambdaURL string
	ticker    context.CancelFunc
	ticks     sync.WaitGroup
	// lifeline ends every process aws-local started when it ends, however it ends.
	lifeline *lifeline.Lifeline
	done     chan error
	stopped  sync.Once
	stopErr  error
}

// Options is what kiln aws-local needs beyond kiln serve's settings.
type Options struct {
	// HostCommand is the build host's command (the kiln binary's `agent run`), as the CodeBuild
	// project's buildspec runs it.
	HostCommand []string
	// TickEvery is how often the schedule function is invoked (default: a minute, as the rule).
	TickEvery time.Duration
	// EC2HostCommand is the agent of the hosted EC2 hosts, Windows and Linux (the kiln binary's
	// `agent --ec2-host`), as the AMIs run it; empty: no hosted hosts, and a Win64 build needs an
	// organization's agent pool, a Linux build the CodeBuild stand-in.
	EC2HostCommand []string
	// LambdaAddr is where the Lambda Invoke API of every function listens (KILN_LAMBDA_ADDR,
	// DefaultLambdaAddr in kiln aws-local); empty: a free loopback port.
	LambdaAddr string
	// Template is the synthesized CloudFormation template whose IAM policies every AWS call is
	// checked against; "" is $KILN_AWSLOCAL_TEMPLATE, else the repository's
	// cdk.out/Kiln.template.json.
	Template string
	// Backends are DynamoDB Local and MinIO shared with other aws-local (StartBackends); nil:
	// this aws-local starts its own, their data under KILN_DATA.
	Backends *Backends
	// Clock is the time of the schedule rule's events (nil: time.Now): the scheduled builds
	// due then start. Tests run it ahead so that a slot comes at once.
	Clock func() time.Time
}

// Start starts kiln aws-local with kiln serve's settings: KILN_ADDR, KILN_DATA (all its
// state is under KILN_DATA/aws-local), KILN_PUBLIC_URL, KILN_ENGINES, KILN_GITHUB_*, KILN_P4,
// KILN_OUTBOUND_ALLOW, KILN_DELIVERY_*, KILN_RATE_LIMIT, KILN_WORKERS (the concurrent build
// hosts), KILN_BUILD_TIMEOUT, KILN_SANDBOX. On the first start it creates the Local organization
// and prints its owner's token to out, as kiln serve does.
func Start(ctx context.Context, cfg Settings, o Options, out io.Writer, logger *slog.Logger) (_ *AWSLocal, err error) {
	if len(o.HostCommand) == 0 {
		return nil, errors.New("aws-local: no build host command")
	}
	if err := os.MkdirAll(cfg.Data, 0o700); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	lock, err := onemachine.LockDataDir(cfg.Data)
	if err != nil {
		return nil, err
	}
	l := &AWSLocal{logger: logger, lock: lock, done: make(chan error, 1)}
	defer func() {
		if err != nil {
			l.stop(context.Background())
		}
	}()
	if l.lifeline, err = lifeline.Start(); err != nil {
		return nil, err
	}
	if l.backend, err = startAWSBackends(ctx, cfg.Data, cfg.ArtifactMax, o.Backends, l.lifeline, logger); err != nil {
		return nil, err
	}
	if l.iam, err = l.startIAM(o); err != nil {
		return nil, err
	}
	apiListener, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	defer func() {
		if err != nil {
			apiListener.Close()
		}
	}()
	if cfg.PublicURL == "" {
		cfg.PublicURL = "http://" + apiListener.Addr().String()
	}
	l.url = "http://" + apiListener.Addr().String()
	localDir := filepath.Join(cfg.Data, awsLocalDir)
	if err := onemachine.EnsureLocalOrganization(ctx, l.backend.store, localDir, cfg.PublicURL, out, func(string) string {
		return "kiln aws-local keeps its DynamoDB Local to itself; stop it, delete " + localDir + " and start again for a new organization."
	}); err != nil {
		return nil, err
	}

	// The stand-ins the AWS SDK clients talk to, each on its own loopback port.
	lambdaURL, lambdaServe, err := l.listenOn(o.LambdaAddr)
	if err != nil {
		return nil, fmt.Errorf("the Lambda Invoke API (KILN_LAMBDA_ADDR): %w", err)
	}
	l.lambdaURL = lambdaURL
	codebuildURL, codebuildServe, err := l.listen()
	if err != nil {
		return nil, err
	}
	queueURL, queueServe, err := l.listen()
	if err != nil {
		return nil, err
	}
	ssmURL, err := l.startParameterStore()
	if err != nil {
		return nil, err
	}
	liveURL, liveServe, err := l.listen()
	if err != nil {
		return nil, err
	}

	versions, err := (engines.Dir{Path: cfg.Engines}).Versions(ctx)
	if err != nil {
		logger.Warn("aws-local: no engines found; builds fail until KILN_ENGINES holds one", slog.String("error", err.Error()))
	}
	images := map[string]string{}
	for _, v := range versions {
		images[v] = "kiln-engine:" + v // the hosts here use KILN_ENGINES; the name shows what AWS would pull
	}
	apiCfg := awsapp.AWSConfig{
		Table: l.backend.table, RateLimit: cfg.RateLimit, Engines: engines.Versions(versions), Artifacts: artifactsURL(l.backend.bucket),
		SMTPURL: cfg.SMTPURL, SMTPFrom: cfg.SMTPFrom, PublicURL: cfg.PublicURL, OutboundAllow: cfg.OutboundAllow, DeliveryQueueURL: queueURL + "/" + awsLocalAccount + "/kiln-deliveries",
		Workflow: awsapp.WorkflowConfig{StateMachineARN: StateMachineARN, HostProject: awsLocalHostProject, HostImages: images,
			BuildTimeLimit: cfg.BuildTimeout, HostCredentialPath: HostCredentialPath, CodeBuildQuota: codeBuildQuota(cfg)},
		Plans: cfg.Plans, CacheMaxPerOrg: cfg.CacheMaxPerOrg, LiveEndpoint: liveURL + "/" + liveStage,
	}
	templatePath, err := awsLocalTemplatePath(o)
	if err != nil {
		return nil, err
	}
	hostClients, err := l.startHostedHosts(cfg, o, templatePath, &apiCfg)
	if err != nil {
		return nil, err
	}
	// Step Functions, running the state machine's definition.
	prefix, err := stepFunctionsPrefix(logger)
	if err != nil {
		return nil, err
	}
	if l.machine, err = stepfunctions.Start(ctx, stepfunctions.Options{Prefix: prefix,
		Definition: stepfunctions.Fill(sfn.Definition(), map[string]string{
			sfn.PlaceholderTaskFunction: awsLocalTaskFunction, sfn.PlaceholderHostProject: awsLocalHostProject}),
		StateMachineARN: StateMachineARN, LambdaEndpoint: lambdaURL, CodeBuildEndpoint: codebuildURL,
		AccessKeyID: awsLocalKey(iam.StateMachinePrincipal), EventsAccessKeyID: awsLocalEventsKey,
		EndedFunction: "ended", PollInterval: 250 * time.Millisecond, Dir: filepath.Join(localDir, "stepfunctions"),
		Log: slogWriter{logger}, Lifeline: l.lifeline, Transitions: l.iam.meter.executionEnded}); err != nil {
		return nil, err
	}

	// Every function's AWS clients sign with its role's key, through the IAM checks.
	machineURL, machineServe, err := l.listen()
	if err != nil {
		return nil, err
	}
	machineProxy, err := iam.Proxy(l.machine.Endpoint(), nil)
	if err != nil {
		return nil, err
	}
	machineServe(&iam.Guard{Auth: l.iam.auth, Service: iam.StepFunctions{StateMachineARN: StateMachineARN}, Next: l.iam.meter.Free("states", l.iam.meter.who, machineProxy), Logger: logger})
	partsOf := func(principal string) (awsapp.Parts, error) {
		st, logs, arts, err := l.iam.dataOf(principal, cfg.ArtifactMax)
		if err != nil {
			return awsapp.Parts{}, err
		}
		awsCfg := awsConfigOf(principal)
		stepFunctions := awssfn.NewFromConfig(awsCfg, func(o *awssfn.Options) { o.BaseEndpoint = aws.String(machineURL) })
		p := awsapp.Parts{Store: st, Logs: logs, Artifacts: arts, Keys: l.backend.keys,
			Workflow: &sfn.Workflow{StateMachineARN: StateMachineARN, Logger: logger, Executions: stepFunctions,
				Hosts: awscodebuild.NewFromConfig(awsCfg, func(o *awscodebuild.Options) { o.BaseEndpoint = aws.String(codebuildURL) })},
			TaskHeartbeats: awsapp.SFNHeartbeats{Client: stepFunctions, Logger: logger}, HostedHosts: hostClients(principal), Logger: logger,
			HostCredentials: hostCredentialsOf(principal, ssmURL),
			Queue: &awsapp.SQSQueue{URL: apiCfg.DeliveryQueueURL, Logger: logger,
				Client: awssqs.NewFromConfig(awsCfg, func(o *awssqs.Options) { o.BaseEndpoint = aws.String(queueURL) })},
			Live: l.livePartsOf(principal, apiCfg.LiveEndpoint)}
		if cfg.Perforce != nil {
			p.Perforce = cfg.Perforce
		}
		if cfg.GitHub != nil {
			p.GitHub = &awsapp.GitHubApp{Client: cfg.GitHub, WebhookSecret: cfg.GitHubWebhookSecret, SignIn: cfg.SignUp}
		}
		return p, nil
	}
	parts, err := partsOf("api")
	if err != nil {
		return nil, err
	}
	workflow := parts.Workflow
	if l.hostLogs, err = awsapp.HostLogs(apiCfg, parts); err != nil {
		return nil, err
	}

	// The Lambdas, each invoked through lambda.NewHandler with its real event JSON.
	api, err := awsapp.NewAPIFromParts(apiCfg, parts)
	if err != nil {
		return nil, err
	}
	taskParts, err := partsOf("task")
	if err != nil {
		return nil, err
	}
	fns, err := awsapp.NewFunctionsFromParts(apiCfg, taskParts)
	if err != nil {
		return nil, err
	}
	endedParts, err := partsOf("ended")
	if err != nil {
		return nil, err
	}
	ended, err := awsapp.NewFunctionsFromParts(apiCfg, endedParts)
	if err != nil {
		return nil, err
	}
	bgCfg := awsapp.BackgroundConfig{AWSConfig: apiCfg, ArtifactRetention: cfg.ArtifactRetention,
		DeliveryAttempts: cfg.DeliveryAttempts, DeliveryBackoff: cfg.DeliveryBackoff}
	deliverParts, err := partsOf("deliver")
	if err != nil {
		return nil, err
	}
	deliverParts.GitHub = nil // as in AWS: the deliver function cannot read the GitHub App's key
	deliver, err := awsapp.NewDeliver(bgCfg, deliverParts)
	if err != nil {
		return nil, err
	}
	scheduleParts, err := partsOf("schedule")
	if err != nil {
		return nil, err
	}
	schedule, err := awsapp.NewSchedule(bgCfg, scheduleParts)
	if err != nil {
		return nil, err
	}
	liveParts, err := partsOf("live")
	if err != nil {
		return nil, err
	}
	liveFn, err := awsapp.NewLiveFunction(apiCfg, liveParts, liveGreeter(lambdaURL))
	if err != nil {
		return nil, err
	}
	if err := l.startLiveAPI(liveFn, liveServe); err != nil {
		return nil, err
	}
	l.functions = lambdas.New(l.iam.meter.handlers(awsLocalHandlers{API: api, Task: fns, Ended: ended, Deliver: deliver, Schedule: schedule,
		Admin: &awsapp.Admin{Store: l.backend.store}, Live: liveFn}.byName()), logger)
	lambdaServe(operatorOrGuarded(l.iam.auth, l.functions,
		&iam.Guard{Auth: l.iam.auth, Service: iam.Lambda{ARNs: awsLocalARNs}, Logger: logger, Next: l.iam.meter.Free("lambda", l.iam.meter.who, l.functions)}))
	// The deliver function's event source and queue as the template has them.
	source, err := deliverySource(templatePath, cfg.DeliveryAttempts, logger)
	if err != nil {
		return nil, err
	}
	l.queue = &sqs.Queue{ARN: awsLocalQueueARN, URL: apiCfg.DeliveryQueueURL, Consumer: l.iam.meter.fn("deliver", sqs.Handler(deliver.Handle), sqsEventSource()...),
		Source: source, Logger: logger}
	queueServe(&iam.Guard{Auth: l.iam.auth, Service: iam.SQS{ARNs: awsLocalARNs}, Next: l.iam.meter.SQS(l.iam.meter.who, l.queue), Logger: logger})

	// CodeBuild: hosts are `kiln agent run`, with the environment of the engine image, as the
	// buildspec's run-as user.
	runAs, err := hostRunAs(templatePath, cfg.BuildUIDs, hostReadable(cfg, o.HostCommand[0])...)
	if err != nil {
		return nil, err
	}
	if l.hosts, err = codebuild.New(codebuild.Config{Project: awsLocalHostProject, Command: o.HostCommand, RunAs: runAs,
		Env: append(hostEnvironment(cfg), l.iam.hostAWSEnv(iam.CodeBuildPrincipal, map[string]string{"SFN": machineURL, "SQS": queueURL, "CODEBUILD": codebuildURL, "SSM": ssmURL})...),
		Dir: filepath.Join(localDir, "codebuild"), MaxRunning: cfg.Workers, Quota: codeBuildQuota(cfg), Parameters: codeBuildParameters(ssmURL),
		DefaultTimeoutMinutes: 60, Logger: logger, Lifeline: l.lifeline}); err != nil {
		return nil, err
	}
	codebuildServe(&iam.Guard{Auth: l.iam.auth, Service: iam.CodeBuild{ARNs: awsLocalARNs}, Next: l.iam.meter.CodeBuild(l.iam.meter.who, l.hosts), Logger: logger})

	// Builds a crash left behind: their executions died with the old process. They end as the
	// ended function ends a build whose execution died, with the same events.
	recoverAWSLocalBuilds(ctx, l.backend.store, ended.Ended.Lifecycle, workflow, logger)

	apiServer := &http.Server{Handler: l.withSocketPath(l.iam.meter.APIGateway("api", &apigateway.Handler{
		Function: l.iam.meter.fn("api", lambda.NewHandler(httpadapter.NewV2(api).ProxyWithContext)), Logger: logger})),
		ReadHeaderTimeout: onemachine.ReadHeaderTimeout, ReadTimeout: onemachine.ReadTimeout, IdleTimeout: onemachine.IdleTimeout,
		ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}
	l.servers = append(l.servers, apiServer)
	go func() {
		err := apiServer.Serve(apiListener)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		l.done <- err
	}()
	l.startTicker(l.iam.meter.fn("schedule", lambda.NewHandler(schedule.Handle)), o.TickEvery, o.Clock)
	logger.Info("kiln aws-local serving", slog.String("addr", apiListener.Addr().String()), slog.String("data", cfg.Data),
		slog.String("state_machine", StateMachineARN), slog.String("lambda_addr", strings.TrimPrefix(lambdaURL, "http://")))
	return l, nil
}

// URL is the API's base URL.
func (l *AWSLocal) URL() string { return l.url }

// LambdaURL is the base URL of the Lambda Invoke API (an AWS SDK's Lambda endpoint).
func (l *AWSLocal) LambdaURL() string { return l.lambdaURL }

// Done reports the API server's end: nil after a shutdown.
func (l *AWSLocal) Done() <-chan error { return l.done }

// Shutdown stops everything: the ticker, the API, the state machine (its running executions are
// aborted, and the ended function fails their builds), the hosts, the queue, then the data
// services.
func (l *AWSLocal) Shutdown(ctx context.Context) error {
	l.stopped.Do(func() {
		ctx, cancel := context.WithTimeout(ctx, onemachine.ShutdownGrace)
		defer cancel()
		l.stopErr = l.stop(ctx)
	})
	return l.stopErr
}

func (l *AWSLocal) stop(ctx context.Context) error {
	var errs []error
	if l.ticker != nil {
		l.ticker()
		l.ticks.Wait()
	}
	if l.live != nil {
		l.live.Close() // every socket closed, its $disconnect run while the table is there
	}
	if l.machine != nil {
		errs = append(errs, l.machine.Close())
	}
	if l.hosts != nil {
		errs = append(errs, l.hosts.Close())
	}
	if l.winHost != nil {
		errs = append(errs, l.winHost.Close())
	}
	if l.linuxHost != nil {
		errs = append(errs, l.linuxHost.Close())
	}
	for _, s := range l.servers {
		errs = append(errs, s.Shutdown(ctx))
	}
	if l.functions != nil {
		l.functions.Wait() // Event invocations still running
	}
	if l.queue != nil {
		l.queue.Close()
	}
	if l.backend != nil {
		l.backend.stop()
	}
	errs = append(errs, l.lifeline.Close()) // ends what the stops above left, if anything
	l.lock.Release()
	l.logger.Info("kiln aws-local stopped")
	return errors.Join(errs...)
}

// listen opens a loopback port for a stand-in and returns its URL and how to serve on it.
func (l *AWSLocal) listen() (string, func(http.Handler), error) { return l.listenOn("") }

// listenOn is listen on addr ("": a free loopback port).
func (l *AWSLocal) listenOn(addr string) (string, func(http.Handler), error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, err
	}
	return "http://" + ln.Addr().String(), func(h http.Handler) {
		s := &http.Server{Handler: h, ReadHeaderTimeout: onemachine.ReadHeaderTimeout, ErrorLog: slog.NewLogLogger(l.logger.Handler(), slog.LevelWarn)}
		l.servers = append(l.servers, s)
		go func() { _ = s.Serve(ln) }()
	}, nil
}

// startTicker invokes the schedule function as its one-minute rule would, with the event
// EventBridge sends.
func (l *AWSLocal) startTicker(fn lambda.Handler, every time.Duration, clock func() time.Time) {
	if every <= 0 {
		every = time.Minute
	}
	if clock == nil {
		clock = time.Now
	}
	ctx, cancel := context.WithCancel(context.Background())
	l.ticker = cancel
	l.ticks.Add(1)
	go func() {
		defer l.ticks.Done()
		wake.Every(ctx, every, func(ctx context.Context) bool {
			payload, _ := json.Marshal(events.CloudWatchEvent{Version: "0", ID: kiln.NewID(), DetailType: "Scheduled Event",
				Source: "aws.events", AccountID: awsLocalAccount, Time: clock().UTC(), Region: Region,
				Resources: []string{"arn:aws:events:" + Region + ":" + awsLocalAccount + ":rule/kiln-schedule"},
				Detail:    json.RawMessage("{}")})
			if _, err := fn.Invoke(ctx, payload); err != nil && ctx.Err() == nil {
				l.logger.Error("aws-local: the schedule function failed", slog.String("error", err.Error()))
			}
			return true
		})
	}()
}

// hostEnvironment is what a build host's image provides: the engines, the Perforce client and the
// ranges its server may be in although not public (the API checked the saved server's address
// against them; the host checks it again before each sync), and the sandbox (on this machine,
// hosts of every organization share it, so builds are confined as kiln serve confines them).
func hostEnvironment(cfg Settings) []string {
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "LANG=C.UTF-8",
		"KILN_ENGINES=" + absPath(cfg.Engines), "KILN_P4=" + cfg.P4, "KILN_OUTBOUND_ALLOW=" + outbound.FormatAllow(cfg.OutboundAllow),
		"KILN_SANDBOX=" + cfg.Sandbox}
	if cfg.Bwrap != "" {
		env = append(env, "KILN_BWRAP="+cfg.Bwrap)
	}
	return env
}

func absPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

// stepFunctionsPrefix finds aws-local-stepfunctions: the repository's cached copy, installed by
// scripts/install-stepfunctions-local.sh on first use.
func stepFunctionsPrefix(logger *slog.Logger) (string, error) {
	if root, err := repodeps.Root(); err == nil {
		prefix := filepath.Join(root, ".cache", "stepfunctions-local")
		if _, err := os.Stat(filepath.Join(prefix, "node_modules", "aws-local-stepfunctions", "package.json")); err == nil {
			return prefix, nil
		}
	}
	return install(logger, "install-stepfunctions-local.sh")
}

// recoverAWSLocalBuilds restarts the executions of pending builds and fails running ones as
// interrupted: a stop or crash of kiln aws-local ended the executions and hosts they had (in AWS
// they would have gone on).
func recoverAWSLocalBuilds(ctx context.Context, st store.Store, lc *builds.Lifecycle, wf builds.Workflow, logger *slog.Logger) {
	running, err := st.QueuedBuilds(ctx, kiln.StatusRunning, 1000)
	if err != nil {
		logger.Error("aws-local: list running builds", slog.String("error", err.Error()))
	}
	for _, b := range running {
		if _, err := lc.Interrupted(ctx, b.OrganizationID, b.ID); err != nil && !kiln.IsCode(err, kiln.EInvalidState) {
			logger.Error("aws-local: fail an interrupted build", slog.String("build_id", b.ID), slog.String("error", err.Error()))
		}
	}
	pending, err := st.QueuedBuilds(ctx, kiln.StatusPending, 1000)
	if err != nil {
		logger.Error("aws-local: list pending builds", slog.String("error", err.Error()))
	}
	for _, b := range pending {
		if err := wf.Start(ctx, b); err != nil {
			logger.Error("aws-local: restart a pending build", slog.String("build_id", b.ID), slog.String("error", err.Error()))
		}
	}
}

// slogWriter passes a child process's error output to the log, a line at a time.
type slogWriter struct{ logger *slog.Logger }

func (w slogWriter) Write(p []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		if line != "" {
			w.logger.Warn("aws-local step functions", slog.String("output", line))
		}
	}
	return len(p), nil
}
