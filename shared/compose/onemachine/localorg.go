package onemachine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kilnbuild/kiln/shared/accounts"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// localBootstrapMarker records that the "Local" organization was made, so it is made only once.
const localBootstrapMarker = "bootstrap.done"

// EnsureLocalOrganization makes the organization "Local" (slug "local") with an owner on the
// first start of a data directory, and prints the owner's token once, with lost's advice for a
// lost token. If a crash came between the write and the marker, the slug is already taken and
// nothing new is made.
func EnsureLocalOrganization(ctx context.Context, s accounts.Store, dataDir, baseURL string, out io.Writer, lost func(email string) string) error {
	marker := filepath.Join(dataDir, localBootstrapMarker)
	if _, err := os.Stat(marker); err == nil {
		return nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("check bootstrap marker: %w", err)
	}
	created, err := accounts.CreateOrganization(ctx, s, accounts.NewOrganization{
		Name: "Local", Slug: "local", OwnerEmail: "owner@kiln.local", OwnerName: "Owner",
	}, time.Now())
	record := time.Now().UTC().Format(time.RFC3339) + "\n"
	switch {
	case kiln.IsCode(err, kiln.EConflict):
		// Made before; the token was printed then.
	case err != nil:
		return fmt.Errorf("create the Local organization: %w", err)
	default:
		fmt.Fprintf(out, "\nkiln: created organization %q (%s) with owner %s.\n", created.Organization.Name, created.Organization.ID, created.Member.User.Email)
		fmt.Fprintf(out, "kiln: the owner's API token (shown only this once; keep it):\n\n    %s\n\n", created.Token)
		fmt.Fprintf(out, "Try it:  curl -H 'Authorization: Bearer %s' %s/auth/me\n", created.Token, baseURL)
		fmt.Fprintf(out, "Lost it? %s\n\n", lost(created.Member.User.Email))
		record += created.Organization.ID + "\n" // kiln admin token's default organization
	}
	if err := os.WriteFile(marker, []byte(record), 0o600); err != nil {
		return fmt.Errorf("write bootstrap marker: %w", err)
	}
	return nil
}

// LocalOrganizationID is the id of the "Local" organization recorded at the first start, or ""
// when the marker does not hold it (made by an older kiln, or never).
func LocalOrganizationID(dataDir string) string {
	b, err := os.ReadFile(filepath.Join(dataDir, localBootstrapMarker))
	if err != nil {
		return ""
	}
	lines := strings.Fields(string(b))
	if len(lines) < 2 {
		return ""
	}
	return lines[1]
}
