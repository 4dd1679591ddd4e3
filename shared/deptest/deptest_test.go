package deptest

import (
	"slices"
	"strings"
	"testing"
)

// TestLinked: a package linked, and one below a forbidden prefix, are found; others are not.
func TestLinked(t *testing.T) {
	got := Linked(t, ".", "os/exec", "strings", "net/http", "internal/runtime")
	for _, want := range []string{"os/exec", "strings"} {
		if !slices.Contains(got, want) {
			t.Errorf("Linked: %v, want %s among them", got, want)
		}
	}
	if slices.Contains(got, "net/http") {
		t.Errorf("Linked: %v, which deptest does not link", got)
	}
	if !slices.ContainsFunc(got, func(d string) bool { return strings.HasPrefix(d, "internal/runtime/") }) {
		t.Errorf("Linked: %v, want a package below internal/runtime", got)
	}
}
