package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"

	"github.com/kilnbuild/kiln/shared/compose/awsapp"
	"github.com/kilnbuild/kiln/shared/compose/serve"
	"github.com/kilnbuild/kiln/shared/settings"
)

func admin(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errors.New("admin needs a command: bootstrap, user, token or plan")
	}
	if args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(stdout, usage)
		return nil
	}
	fs := flag.NewFlagSet("kiln admin "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataDefault := settings.Data.Get(getenv)
	data := fs.String("data", dataDefault, "the service's data directory (KILN_DATA)")
	table := fs.String("dynamodb-table", "", "the AWS deployment's DynamoDB table instead of a data directory (AWS SDK settings from the environment)")
	email := fs.String("email", "", "the user's email")
	switch args[0] {
	case "bootstrap":
		org := fs.String("org", "", "the organization's name")
		name := fs.String("name", "", "the user's name")
		force := fs.Bool("force", false, "with --dynamodb-table: bootstrap although an organization was bootstrapped before")
		plan := fs.String("plan", "enterprise", "the organization's plan: free, pro or enterprise (a hosted service's operator passes free)")
		if err := parse(fs, args[1:], "org", "email", "name"); err != nil {
			return err
		}
		if *table != "" {
			return dynamoAdmin(ctx, *table, awsapp.AdminRequest{Command: "bootstrap", Organization: *org, Email: *email, Name: *name, Force: *force, Plan: *plan}, stdout)
		}
		return serve.AdminBootstrap(ctx, *data, *org, *email, *name, *plan, stdout)
	case "plan":
		orgID := fs.String("org-id", "", "the organization's id")
		plan := fs.String("plan", "", "free, pro or enterprise")
		maxRunning := fs.String("max-concurrent-builds", "", "enterprise only: the organization's own limit of builds running at once (0: the plan's)")
		if err := parse(fs, args[1:], "org-id", "plan"); err != nil {
			return err
		}
		var limit *int
		if *maxRunning != "" {
			n, err := strconv.Atoi(*maxRunning)
			if err != nil {
				return fmt.Errorf("--max-concurrent-builds: %q is not a whole number", *maxRunning)
			}
			limit = &n
		}
		if *table != "" {
			return dynamoAdmin(ctx, *table, awsapp.AdminRequest{Command: "plan", OrganizationID: *orgID, Plan: *plan, MaxConcurrentBuilds: limit}, stdout)
		}
		return serve.AdminPlan(ctx, *data, *orgID, *plan, limit, stdout)
	case "user":
		orgID := fs.String("org-id", "", "the organization's id")
		name := fs.String("name", "", "the user's name")
		role := fs.String("role", "member", "owner, admin, member or viewer")
		if err := parse(fs, args[1:], "org-id", "email", "name"); err != nil {
			return err
		}
		if *table != "" {
			return dynamoAdmin(ctx, *table, awsapp.AdminRequest{Command: "user", OrganizationID: *orgID, Email: *email, Name: *name, Role: *role}, stdout)
		}
		return serve.AdminAddUser(ctx, *data, *orgID, *email, *name, *role, stdout)
	case "token":
		orgID := fs.String("org-id", "", "the organization's id (default: the Local organization kiln serve made)")
		if err := parse(fs, args[1:], "email"); err != nil {
			return err
		}
		if *table != "" {
			if *orgID == "" {
				return errors.New("--org-id is required with --dynamodb-table")
			}
			return dynamoAdmin(ctx, *table, awsapp.AdminRequest{Command: "token", OrganizationID: *orgID, Email: *email}, stdout)
		}
		return serve.AdminToken(ctx, *data, *orgID, *email, stdout)
	default:
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("unknown admin command %q", args[0])
	}
}

// dynamoAdmin runs an admin command on the AWS deployment's table, as the admin Lambda does, and
// prints its JSON line.
func dynamoAdmin(ctx context.Context, table string, req awsapp.AdminRequest, stdout io.Writer) error {
	a, err := awsapp.NewDynamoAdmin(ctx, table)
	if err != nil {
		return err
	}
	res, err := a.Run(ctx, req)
	if err != nil {
		return err
	}
	return json.NewEncoder(stdout).Encode(res)
}

// parse parses flags and checks that the required ones were given.
func parse(fs *flag.FlagSet, args []string, required ...string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	for _, name := range required {
		if fs.Lookup(name).Value.String() == "" {
			return fmt.Errorf("--%s is required", name)
		}
	}
	return nil
}
