package serve

import (
	"context"
	"fmt"
	"io"

	"github.com/kilnbuild/kiln/shared/accounts"
	"github.com/kilnbuild/kiln/shared/compose/onemachine"
)

// EnsureLocalOrganization makes the organization "Local" (slug "local") with an owner on the
// first start of a data directory, and prints the owner's token once. If a crash came between
// the write and the marker, the slug is already taken and nothing new is made.
func EnsureLocalOrganization(ctx context.Context, s accounts.Store, dataDir, baseURL string, out io.Writer) error {
	return onemachine.EnsureLocalOrganization(ctx, s, dataDir, baseURL, out, func(email string) string {
		return fmt.Sprintf("kiln admin token --data %s --email %s prints a new one.", dataDir, email)
	})
}
