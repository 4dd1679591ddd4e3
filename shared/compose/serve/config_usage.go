package serve

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// printSettings is `kiln serve -h`: each setting once, with its flag, environment variable,
// default and meaning. (Flags also take dashes for underscores: --public-url.)
func printSettings(w io.Writer) {
	fmt.Fprint(w, "Usage: kiln serve [flags]\n\nEach setting is read from its environment variable; the flag overrides it.\n\n")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  flag\tenvironment\tdefault\tmeaning")
	for _, s := range serveSettings {
		def := s.def
		if def == "" {
			def = "-"
		}
		fmt.Fprintf(tw, "  --%s\t%s\t%s\t%s\n", flagName(s.env), s.env, def, s.usage)
	}
	tw.Flush()
}

// flagName is a setting's flag: its environment variable without KILN_, in lower case.
func flagName(env string) string { return strings.ToLower(strings.TrimPrefix(env, "KILN_")) }
