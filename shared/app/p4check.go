package app

import (
	"context"
	"os/exec"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/perforce"
)

// p4Missing says why the Perforce client KILN_P4 cannot be run (not found, not executable), or
// nil when it can.
func p4Missing(p4 string) error {
	_, err := exec.LookPath(p4)
	return err
}

// errNoP4 is what a customer hears when the service has no Perforce client: the operator's
// problem, not theirs, so 503 rather than a failed check of their credentials.
var errNoP4 = kiln.Errorf(kiln.EServiceUnavailable,
	"this kiln service has no Perforce client; its operator must install p4 or point KILN_P4 at it")

// checkedPerforce answers service_unavailable instead of running a p4 that is not there.
type checkedPerforce struct{ *perforce.Verifier }

func (c checkedPerforce) Verify(ctx context.Context, orgID, serverURL, user, ticket, knownFingerprint string) (string, error) {
	if p4Missing(c.P4) != nil {
		return "", errNoP4
	}
	return c.Verifier.Verify(ctx, orgID, serverURL, user, ticket, knownFingerprint)
}

func (c checkedPerforce) ReadProject(ctx context.Context, orgID string, cr perforce.Credentials, stream, uprojectPath string,
	parse func(path string, data []byte) (*kiln.UprojectInfo, error)) (*kiln.UprojectInfo, error) {
	if p4Missing(c.P4) != nil {
		return nil, errNoP4
	}
	return c.Verifier.ReadProject(ctx, orgID, cr, stream, uprojectPath, parse)
}
