package kiln

import (
	"strings"
	"testing"
)

func TestCredentialName(t *testing.T) {
	for _, tc := range []struct {
		name     string
		given    *string
		fallback string
		want     string
		problem  string
	}{
		{"GivenIsTrimmed", ptr("  ci box "), "api", "ci box", ""},
		{"NoneTakesTheFallback", nil, "api", "api", ""},
		{"NoneWithoutAFallbackIsRequired", nil, "", "", "required"},
		{"Blank", ptr("   "), "api", "", "must not be empty"},
		{"TooLong", ptr(strings.Repeat("x", MaxNameLength+1)), "api", strings.Repeat("x", MaxNameLength+1), "must be at most 100 characters"},
		{"ControlCharacter", ptr("a\x00b"), "", "a\x00b", "must not contain control characters"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := FieldErrors{}
			got := CredentialName("name", tc.given, tc.fallback, errs)
			if got != tc.want || errs["name"] != tc.problem || len(errs) > 1 {
				t.Errorf("CredentialName = %q, errors %v; want %q, problem %q", got, errs, tc.want, tc.problem)
			}
		})
	}
}

func ptr(s string) *string { return &s }
