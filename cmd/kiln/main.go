// Command kiln runs the kiln build service on one machine (`kiln serve`) and administers it
// (`kiln admin`).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/kilnbuild/kiln/shared/compose/serve"
	"github.com/kilnbuild/kiln/shared/kiln"
)

const usage = `kiln: a build service for Unreal Engine games.

For customers and CI jobs (KILN_URL and KILN_TOKEN from the environment, or saved by kiln login;
exit status 0 success, 1 a build that failed or a download that did not match, 2 usage or API
errors; --json prints JSON; BUILD is a build's id, or its number in its project: Shooter#2 or
2 --project Shooter; docs/cli.md):
  kiln login --url URL    check a token (KILN_TOKEN, or read from standard input) and save both
  kiln builds list [--project PROJECT] [--setting ID] [--status S] [--limit N]
  kiln builds trigger [PROJECT] SETTING [--project P] [--branch B] [--commit C] [--changelist N] [--clean] [--follow]
                          PROJECT is a project's id or name; SETTING a build setting's id or
                          name, Platform/BuildType (Linux/Shipping; Linux/Shipping@main where two
                          settings of the project share it); without PROJECT or --project the
                          setting is looked for in every project. --follow shows the stage and
                          time left on standard error when it is a terminal
  kiln builds rerun BUILD [--project P] [--follow]
                          a new build of the same setting, branch and commit (or changelist)
  kiln builds logs BUILD [--project P] [--follow]
  kiln builds cancel BUILD [--project P]
  kiln artifacts download BUILD [--project P] [-o FILE]
                          download the artifact, resumable; says "verified MD5 ..." at the end.
                          BUILD, here and above: a build's id, or its number (the # of builds
                          list) in its project: Shooter#2, or 2 --project Shooter
  kiln settings list [--project PROJECT]
                          the build settings: id, project, name, branch or stream, engine,
                          trigger and latest build
  kiln members list       the organization's members and their roles
  kiln members role MEMBER ROLE
                          give a member a role (owner, admin, member, viewer; owners and admins,
                          only an owner makes or unmakes an owner); MEMBER is an id or an email
  kiln members remove MEMBER
                          remove a member; their tokens stop working at once
  kiln members leave      leave the organization; your tokens for it stop working
  kiln invitations create EMAIL ROLE
                          invite a person with a role (owners and admins; only an owner invites
                          an owner): prints the link to accept, once, valid for 7 days
  kiln invitations list   the pending invitations
  kiln invitations revoke ID
                          revoke an invitation; its link stops working
  kiln usage [--month YYYY-MM]
                          the organization's build minutes, running builds, projects, storage
                          and skipped triggers against its plan

For operators (the service itself and its build machines):
  kiln serve [flags]      run the service on this machine (kiln serve -h lists the settings)
  kiln aws-local [flags]  run the AWS deployment's code on this machine (DynamoDB Local, MinIO,
                          the state machine on aws-local-stepfunctions, CodeBuild hosts as
                          local processes); the same settings as kiln serve
  kiln admin bootstrap --org NAME --email EMAIL --name NAME [--plan free|pro|enterprise]
                          create an organization (default plan enterprise) with an owner; prints
                          {"token","organizationId","userId"}
  kiln admin plan --org-id ID --plan PLAN [--max-concurrent-builds N]
                          change an organization's plan (N: enterprise's own limit of running
                          builds, 0 the plan's); prints {"organizationId","plan",...}
  kiln admin user --org-id ID --email EMAIL --name NAME --role ROLE
                          add a member (owner, admin, member, viewer); prints {"token","userId"}
  kiln admin token --email EMAIL [--org-id ID]
                          issue a new token for a member (a lost token; default: the Local
                          organization); prints {"token","organizationId","userId"}
  kiln agent run          run the one build of a build host (a CodeBuild container) through the
                          service's host API; exits 0 when the build completed, 1 when not
  kiln agent --url URL --token-file FILE [--pool P] [--engines DIR] [--platforms Win64,Linux]
                          a studio's build machine: claims its organization's builds of its pool
                          and runs them one at a time until SIGTERM, on Linux each in a bubblewrap
                          sandbox (also KILN_AGENT_*; see docs/agents.md); --config FILE (or
                          KILN_AGENT_CONFIG) reads KILN_* settings from a file of KEY=VALUE lines
                          (the environment wins)
  kiln --version          the version, commit and Go version of this binary

kiln admin reads the service's data directory from --data or KILN_DATA (default ./.kiln), and
works while kiln serve runs on it. With --dynamodb-table TABLE it works on the AWS deployment's
table instead (AWS SDK settings from the environment: AWS_REGION, credentials,
AWS_ENDPOINT_URL_DYNAMODB), as the admin Lambda does: there bootstrap is for the first
organization, and refused once one was bootstrapped unless --force is given; token needs --org-id.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, errorLine(err))
	}
	os.Exit(exitCode(err))
}

// exitCode is 0 for success and for a help that was asked for, 1 for a build host's build that
// did not complete, 2 for anything else.
func exitCode(err error) int {
	switch {
	case err == nil || errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errBuildFailed):
		return 1
	}
	return 2
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errors.New("no command given (kiln help lists them)")
	}
	switch args[0] {
	case "serve":
		return runServe(ctx, args[1:], getenv, stdout, stderr)
	case "aws-local":
		return awsLocal(ctx, args[1:], getenv, stdout, stderr)
	case "admin":
		return admin(ctx, args[1:], getenv, stdout, stderr)
	case "agent":
		rest, getenv, err := withAgentConfig(args[1:], getenv) // --config FILE: agentconfig.go
		if err != nil {
			return err
		}
		return agentCmd(ctx, rest, getenv, stderr)
	case "login":
		return login(ctx, args[1:], getenv, stdout, stderr)
	case "builds":
		return builds(ctx, args[1:], getenv, stdout, stderr)
	case "artifacts":
		return artifacts(ctx, args[1:], getenv, stdout, stderr)
	case "settings":
		return settingsCmd(ctx, args[1:], getenv, stdout, stderr)
	case "usage":
		return usageCmd(ctx, args[1:], getenv, stdout, stderr)
	case "members":
		return members(ctx, args[1:], getenv, stdout, stderr)
	case "invitations":
		return invitations(ctx, args[1:], getenv, stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, version())
		return nil
	default:
		return unknownCommand(args[0])
	}
}

// runServe is `kiln serve`: it starts the service and waits for a signal to stop it.
func runServe(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := serve.LoadConfig(args, getenv, stderr)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	logger.Info("kiln starting", slog.String("version", version()))
	svc, err := serve.Start(ctx, cfg, stdout, logger)
	if err != nil {
		return err
	}
	select {
	case err := <-svc.Done():
		return err
	case <-ctx.Done():
		return svc.Shutdown(context.Background())
	}
}

// errorLine is how kiln reports err: "kiln: " and its description, unless that names the
// command already ("kiln builds trigger: missing ...").
func errorLine(err error) string {
	s := describe(err)
	if strings.HasPrefix(s, "kiln ") {
		return s
	}
	return "kiln: " + s
}

// describe shows a validation error with its fields, and what to check when the service could
// not be reached or is not kiln.
func describe(err error) string {
	var ke *kiln.Error
	if errors.As(err, &ke) && len(ke.Fields) > 0 {
		s := ke.Message
		for f, p := range ke.Fields {
			s += fmt.Sprintf("\n  %s: %s", f, p)
		}
		return s
	}
	return err.Error() + serviceHint(err)
}
