package main

import (
	"strings"
	"testing"
)

// TestServeSaysWhereToGo: kiln serve prints the web console's URL at start, and, when it lacks
// an engine or a GitHub App, says so with what to do and points at make demo.
func TestServeSaysWhereToGo(t *testing.T) {
	for _, tc := range []struct {
		name  string
		start func(t *testing.T) (url, printed string)
		want  []string
		not   []string
	}{
		{
			name: "make run: no engine, no GitHub App",
			start: func(t *testing.T) (string, string) {
				p := startPlainService(t)
				return p.svc.URL(), p.out.String()
			},
			want: []string{"kiln: before this kiln can build:", "no Unreal Engine in ", "(KILN_ENGINES)",
				"no GitHub App (KILN_GITHUB_APP_ID, KILN_GITHUB_APP_KEY)", "make demo"},
		},
		{
			name: "an engine and a GitHub App",
			start: func(t *testing.T) (string, string) {
				w := newCLIWorld(t)
				return w.proxy.URL(), w.out.String() // its KILN_PUBLIC_URL is the proxy's
			},
			not: []string{"before this kiln can build", "no Unreal Engine", "no GitHub App", "make demo"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url, printed := tc.start(t)
			want := append([]string{"kiln: the web console is at " + url + "/console/ (sign in with the owner's API token)"}, tc.want...)
			for _, w := range want {
				if !strings.Contains(printed, w) {
					t.Errorf("kiln serve did not print %q:\n%s", w, printed)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(printed, n) {
					t.Errorf("kiln serve printed %q:\n%s", n, printed)
				}
			}
		})
	}
}
