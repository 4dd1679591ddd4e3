package notify

import (
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
)

func TestInvitation(t *testing.T) {
	inv := &kiln.Invitation{Email: " dev@example.com", Role: kiln.RoleAdmin, InvitedByName: "Ada\nEvil: header",
		ExpiresAt: time.Date(2026, 3, 8, 10, 0, 0, 0, time.UTC)}
	m := Invitation(inv, &kiln.Organization{Name: "Studio"}, "https://kiln.example.com/console/invitations/accept#kinv_x")
	if m.To != "dev@example.com" || m.Subject != "[kiln] Invitation to Studio" {
		t.Fatalf("to %q, subject %q", m.To, m.Subject)
	}
	for _, want := range []string{"Ada Evil: header invites you to join Studio on kiln as admin.",
		"https://kiln.example.com/console/invitations/accept#kinv_x", "until 8 March 2026 10:00 UTC"} {
		if !strings.Contains(m.Text, want) {
			t.Errorf("text lacks %q:\n%s", want, m.Text)
		}
	}
}
