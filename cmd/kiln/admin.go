package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/kilnbuild/kiln/shared/app"
)

func admin(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errors.New("admin needs a command: bootstrap, user or token")
	}
	if args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(stdout, usage)
		return nil
	}
	fs := flag.NewFlagSet("kiln admin "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataDefault := getenv("KILN_DATA")
	if dataDefault == "" {
		dataDefault = "./.kiln"
	}
	data := fs.String("data", dataDefault, "the service's data directory (KILN_DATA)")
	email := fs.String("email", "", "the user's email")
	switch args[0] {
	case "bootstrap":
		org := fs.String("org", "", "the organization's name")
		name := fs.String("name", "", "the user's name")
		if err := parse(fs, args[1:], "org", "email", "name"); err != nil {
			return err
		}
		return app.AdminBootstrap(ctx, *data, *org, *email, *name, stdout)
	case "user":
		orgID := fs.String("org-id", "", "the organization's id")
		name := fs.String("name", "", "the user's name")
		role := fs.String("role", "member", "owner, admin, member or viewer")
		if err := parse(fs, args[1:], "org-id", "email", "name"); err != nil {
			return err
		}
		return app.AdminAddUser(ctx, *data, *orgID, *email, *name, *role, stdout)
	case "token":
		orgID := fs.String("org-id", "", "the organization's id (default: the Local organization kiln serve made)")
		if err := parse(fs, args[1:], "email"); err != nil {
			return err
		}
		return app.AdminToken(ctx, *data, *orgID, *email, stdout)
	default:
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("unknown admin command %q", args[0])
	}
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
