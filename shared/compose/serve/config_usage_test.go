package serve

import (
	"bytes"
	"errors"
	"flag"
	"strings"
	"testing"
)

func TestServeHelpListsEachSettingOnce(t *testing.T) {
	var out bytes.Buffer
	if _, err := LoadConfig([]string{"-h"}, func(string) string { return "" }, &out); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("-h: %v", err)
	}
	for _, s := range serveSettings {
		var lines []string
		for _, l := range strings.Split(out.String(), "\n") {
			if strings.Contains(l, " "+s.env+" ") {
				lines = append(lines, l)
			}
		}
		def := s.def
		if def == "" {
			def = "-"
		}
		if len(lines) != 1 || !strings.HasPrefix(strings.TrimSpace(lines[0]), "--"+flagName(s.env)+" ") || !strings.Contains(lines[0], " "+def+" ") {
			t.Errorf("%s: lines %q, want one with --%s and default %q", s.env, lines, flagName(s.env), def)
		}
	}
}
