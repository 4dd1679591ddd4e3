package main

import (
	"context"
	"flag"
	"io"

	"github.com/kilnbuild/kiln/shared/client"
)

// orgCommand is a command of a group that acts on the token's organization (kiln members, kiln
// invitations): its positional arguments, --json, the API client and who the token is.
type orgCommand struct {
	name   string // "role", "create", ...
	pos    []string
	asJSON bool
	c      *client.Client
	me     *client.Me
}

// startOrgCommand reads `kiln GROUP COMMAND ARGS...`: the group's help, an unknown command (the
// group's commands listed in commands), the arguments each command takes (args, by name), then
// connects and asks who the token is. A nil command with a nil error means help was printed.
func startOrgCommand(ctx context.Context, group, commands string, wants map[string]int, args []string,
	getenv func(string) string, stdout, stderr io.Writer) (*orgCommand, error) {
	if len(args) == 0 {
		return nil, errNoSuchCommand(group, args, commands)
	}
	if args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		return nil, groupHelp(stdout, group)
	}
	want, ok := wants[args[0]]
	if !ok {
		return nil, errNoSuchCommand(group, args, commands)
	}
	fs := flag.NewFlagSet("kiln "+group+" "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print JSON instead of text")
	pos, err := parseArgs(fs, args[1:], want)
	if err != nil {
		return nil, err
	}
	c, err := apiClient(getenv)
	if err != nil {
		return nil, err
	}
	me, err := c.Me(ctx)
	if err != nil {
		return nil, err
	}
	return &orgCommand{name: args[0], pos: pos, asJSON: *asJSON, c: c, me: me}, nil
}
