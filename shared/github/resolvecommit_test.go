package github

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/github/githubtest"
	"github.com/kilnbuild/kiln/shared/kiln"
)

func TestResolveCommit(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	repo := f.gh.AddRepo(studio, "studio/shooter", true, "main")
	first := repo.Commit("main", "Initial import", "Ada Lovelace", map[string]string{"README.md": "hi"})
	second := repo.Commit("main", "More", "Ada Lovelace", map[string]string{"README.md": "hi again"})
	// A 4-digit prefix that starts neither commit.
	unknown := "0000"
	for strings.HasPrefix(first, unknown) || strings.HasPrefix(second, unknown) {
		unknown = "1111"
	}
	for _, tt := range []struct {
		name, prefix, want string
	}{
		{"full", first, first},
		{"seven digits", first[:7], first},
		{"six digits, as the product's own example", second[:6], second},
		{"four digits", second[:4], second},
		{"upper case", strings.ToUpper(first[:8]), first},
		{"unknown", unknown, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := f.c.ResolveCommit(t.Context(), studio, "studio/shooter", tt.prefix)
			if tt.want == "" {
				wantCommitField(t, err)
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ResolveCommit(%s) = %q, %v; want %s", tt.prefix, got, err, tt.want)
			}
		})
	}
	t.Run("ambiguous", func(t *testing.T) {
		// GitHub answers 422 to a prefix of several commits, as to one of none.
		f.gh.Fail(githubtest.RouteCommit, http.StatusUnprocessableEntity)
		_, err := f.c.ResolveCommit(t.Context(), studio, "studio/shooter", first[:4])
		wantCommitField(t, err)
	})
}

func wantCommitField(t *testing.T, err error) {
	t.Helper()
	var ke *kiln.Error
	if !errors.As(err, &ke) || ke.Code != kiln.EValidation || ke.Fields["commit"] == "" {
		t.Fatalf("err %v; want validation_failed on commit", err)
	}
}
