package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"

	"github.com/kilnbuild/kiln/shared/compose/awslocalapp"
	"github.com/kilnbuild/kiln/shared/compose/serve"
	"github.com/kilnbuild/kiln/shared/settings"
)

// awsLocal runs `kiln aws-local`: the AWS deployment's code paths on this machine, with kiln
// serve's settings. Its build hosts are this binary's `kiln agent run`; the Lambda Invoke API of
// its functions listens on KILN_LAMBDA_ADDR (default 127.0.0.1:3001, as sam local start-lambda).
func awsLocal(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if err := awsLocalSupported(runtime.GOOS); err != nil {
		return err
	}
	cfg, err := serve.LoadConfig(args, getenv, stderr)
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find this binary (the build hosts run it): %w", err)
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	logger.Info("kiln aws-local starting", slog.String("version", version()))
	s, err := awsLocalSettings(cfg)
	if err != nil {
		return err
	}
	if s.CodeBuildQuota, err = settings.CodeBuildQuota.Read(getenv); err != nil {
		return err
	}
	l, err := awslocalapp.Start(ctx, s, awslocalapp.Options{HostCommand: []string{self, "agent", "run"}, EC2HostCommand: []string{self, "agent", "--ec2-host"},
		LambdaAddr: settings.LambdaAddr.Get(getenv)}, stdout, logger)
	if err != nil {
		return err
	}
	select {
	case err := <-l.Done():
		_ = l.Shutdown(context.Background())
		return err
	case <-ctx.Done():
		return l.Shutdown(context.Background())
	}
}

// awsLocalSettings are the settings of kiln serve that kiln aws-local reads.
func awsLocalSettings(cfg serve.Config) (awslocalapp.Settings, error) {
	gh, err := cfg.GitHubApp()
	if err != nil {
		return awslocalapp.Settings{}, err
	}
	return awslocalapp.Settings{
		Addr: cfg.Addr, Data: cfg.Data, PublicURL: cfg.GivenPublicURL(), Engines: cfg.Engines, Workers: cfg.Workers,
		GitHub: gh, GitHubWebhookSecret: cfg.GitHubWebhookSecret, SignUp: cfg.SignUp, Perforce: cfg.PerforceVerifier(),
		P4: cfg.P4, Sandbox: cfg.Sandbox, Bwrap: cfg.Bwrap, OutboundAllow: cfg.OutboundAllow,
		RateLimit: cfg.RateLimit, SMTPURL: cfg.SMTPURL, SMTPFrom: cfg.SMTPFrom, Plans: cfg.Plans,
		BuildTimeout: cfg.BuildTimeout, BuildUIDs: cfg.BuildUIDs,
		ArtifactMax: cfg.ArtifactMax, ArtifactRetention: cfg.ArtifactRetention, CacheMaxPerOrg: cfg.CacheMaxPerOrg,
		DeliveryAttempts: cfg.DeliveryAttempts, DeliveryBackoff: cfg.DeliveryBackoff,
	}, nil
}

// awsLocalSupported refuses to start aws-local where it cannot run: its DynamoDB Local runs in a
// private network namespace and its builds in bubblewrap, both Linux only.
func awsLocalSupported(goos string) error {
	if goos != "linux" {
		return fmt.Errorf("kiln aws-local needs Linux (DynamoDB Local runs in a private network namespace, builds in bubblewrap); this is %s", goos)
	}
	return nil
}
