package auth

import (
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
)

func TestNewInvitation(t *testing.T) {
	at := time.Date(2026, 3, 1, 10, 0, 0, 123456789, time.UTC)
	secret, inv := NewInvitation("org1", " dev@example.com ", kiln.RoleAdmin, kiln.User{ID: "u1", Name: "Ada"}, at)
	if !WellFormedInvitation(secret) || WellFormed(secret) {
		t.Fatalf("secret %q: invitation shape %v, token shape %v", secret, WellFormedInvitation(secret), WellFormed(secret))
	}
	if inv.Hash != HashToken(secret) || strings.Contains(inv.Hash, secret) {
		t.Fatalf("hash %q is not the secret's SHA-256", inv.Hash)
	}
	if inv.Email != "dev@example.com" || inv.Role != kiln.RoleAdmin || inv.InvitedByID != "u1" || inv.InvitedByName != "Ada" {
		t.Fatalf("invitation %+v", inv)
	}
	if want := at.Truncate(time.Millisecond).Add(7 * 24 * time.Hour); !inv.ExpiresAt.Equal(want) {
		t.Fatalf("expires %v, want %v", inv.ExpiresAt, want)
	}
	for _, bad := range []string{"", "kinv_", "kiln_" + secret[5:], secret + "x", secret[:len(secret)-1] + "-"} {
		if WellFormedInvitation(bad) {
			t.Errorf("WellFormedInvitation(%q) = true", bad)
		}
	}
}
