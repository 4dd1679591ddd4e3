package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/kilnbuild/kiln/shared/client"
	"github.com/kilnbuild/kiln/shared/settings"
)

// cliStdin is where kiln login reads a token that is not in KILN_TOKEN.
var cliStdin io.Reader = os.Stdin

// login checks a URL and token against the service (GET /auth/me) and saves them. The token comes
// from KILN_TOKEN or standard input (asked for without echo on a terminal); it is never printed.
func login(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("kiln login", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := fs.String("url", settings.URL.Get(getenv), "the service's address, e.g. https://kiln.example.com (KILN_URL)")
	if _, err := parseArgs(fs, args, 0); err != nil {
		return err
	}
	if *url == "" {
		return usageErr("kiln login needs --url (or KILN_URL)")
	}
	token := settings.Token.Get(getenv)
	if token == "" {
		var err error
		if token, err = readToken(cliStdin, stderr); err != nil {
			return err
		}
	}
	if strings.HasPrefix(token, "ksess_") {
		return usageErr("that is a console session, which ends within 12 hours: make an API token on the console's organization page (or POST /auth/tokens) and log in with it")
	}
	c, err := client.New(*url, token, nil)
	if err != nil {
		return err
	}
	me, err := c.Me(ctx)
	var refused *client.APIError
	if errors.As(err, &refused) && (refused.Status == 401 || refused.Status == 403) {
		return fmt.Errorf("the service did not accept the token: %w", err)
	}
	if err != nil {
		return err
	}
	path, err := saveCLIConfig(cliConfig{URL: c.BaseURL(), Token: token})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Logged in to %s as %s (%s of %s); saved in %s\n", c.BaseURL(), me.User.Email, me.Membership.Role, me.Organization.Name, path)
	return nil
}

// readToken reads one line from in; on a terminal it asks for it and turns echo off meanwhile.
func readToken(in io.Reader, prompt io.Writer) (string, error) {
	if f, ok := in.(*os.File); ok && isTerminal(f) {
		fmt.Fprint(prompt, "API token (kiln_...): ")
		defer fmt.Fprintln(prompt)
		restore, err := echoOff(f)
		if err == nil {
			defer restore()
		}
	}
	line, err := bufio.NewReader(in).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("read the token: %w", err)
	}
	token := strings.TrimSpace(line)
	if token == "" {
		return "", usageErr("no token given: set KILN_TOKEN or pass it on standard input")
	}
	return token, nil
}
