package notify

import (
	"fmt"
	"strings"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// Invitation renders the email that invites inv.Email to the organization org: who invited them,
// with which role, the link to accept and until when it works.
func Invitation(inv *kiln.Invitation, org *kiln.Organization, link string) Message {
	orgName := oneLine(org.Name)
	var t strings.Builder
	fmt.Fprintf(&t, "%s invites you to join %s on kiln as %s.\n\n", oneLine(inv.InvitedByName), orgName, oneLine(string(inv.Role)))
	fmt.Fprintf(&t, "Accept the invitation here (the link works once, until %s):\n\n%s\n",
		inv.ExpiresAt.UTC().Format("2 January 2006 15:04 MST"), oneLine(link))
	t.WriteString("\n-- \nIf you do not know this organization, ignore this email: nothing happens without the link.\n")
	return Message{
		To:      strings.TrimSpace(inv.Email),
		Subject: fmt.Sprintf("[kiln] Invitation to %s", orgName),
		Text:    t.String(),
	}
}
