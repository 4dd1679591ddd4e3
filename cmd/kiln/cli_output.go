package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// failure is an outcome the customer commands report with exit status 1 (a build that failed, a
// download that did not match), as exitCode does for errBuildFailed; anything else, usage and
// API errors included, is 2.
type failure struct{ msg string }

func (f *failure) Error() string        { return f.msg }
func (f *failure) Is(target error) bool { return target == errBuildFailed }

// usageErr is a command line that cannot be run (exit status 2).
func usageErr(format string, a ...any) error { return fmt.Errorf(format, a...) }

// parseArgs parses flags given before, between or after the positional arguments, and wants
// exactly n of those: a missing one is named from the command's usage line. The command's help
// (-h) is its usage line and its flags.
func parseArgs(fs *flag.FlagSet, args []string, n int) ([]string, error) {
	return parseArgsBetween(fs, args, n, n)
}

// parseArgsBetween is parseArgs for a command that takes from least to most positional
// arguments; fewer are named as missing from the command's usage line.
func parseArgsBetween(fs *flag.FlagSet, args []string, least, most int) ([]string, error) {
	commandHelp(fs)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	switch {
	case len(pos) < least:
		return nil, argCountErr(fs.Name(), pos, least)
	case len(pos) > most:
		return nil, argCountErr(fs.Name(), pos, most)
	}
	for i, p := range pos {
		if strings.TrimSpace(p) == "" {
			return nil, usageErr("%s: argument %d is empty", fs.Name(), i+1)
		}
	}
	return pos, nil
}

// printJSON writes v as one line of JSON.
func printJSON(w io.Writer, v any) error {
	return json.NewEncoder(w).Encode(v)
}

// printTable writes a header and rows aligned in columns.
func printTable(w io.Writer, header []string, rows [][]string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	return tw.Flush()
}

// orDash is s, or "-" when s is nil or empty.
func orDash(s *string) string {
	if s == nil || *s == "" {
		return "-"
	}
	return *s
}

// errNoSuchCommand names the commands of a group.
func errNoSuchCommand(group string, args []string, commands string) error {
	if len(args) == 0 {
		return usageErr("kiln %s needs a command: %s", group, commands)
	}
	return usageErr("unknown command kiln %s %s (commands: %s)", group, args[0], commands)
}
