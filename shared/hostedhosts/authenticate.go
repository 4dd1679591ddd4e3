package hostedhosts

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// InService answers whether an instance is in service in the hosts' Auto Scaling group (Group
// does).
type InService interface {
	InService(ctx context.Context, instanceID string) (bool, error)
}

// Authenticator tells whether a claim's identity is one of kiln's hosted hosts: a document
// AWS signed (Certificates), of the deployment's account, of an instance in service in the
// hosts' group. It returns the host as an agent of the hosted pool; the dispatcher then allows
// the instance one claim ever.
type Authenticator struct {
	Certificates Certificates
	// AccountID is the deployment's AWS account; Instances the hosts' Auto Scaling group.
	AccountID string
	Instances InService
	Logger    *slog.Logger
}

// Refusals of identities that verify but are not kiln's hosts.
var (
	ErrOtherAccount = kiln.Errorf(kiln.EInsufficientScope, "the instance belongs to another AWS account than this deployment's")
	ErrNotInGroup   = kiln.Errorf(kiln.EInsufficientScope, "the instance is not in service in this deployment's Windows host group")
)

// Authenticate checks the identity and returns its host as an agent of kiln.HostedPoolWin64.
func (a *Authenticator) Authenticate(ctx context.Context, id Identity) (*kiln.Agent, error) {
	doc, err := a.Certificates.Verify(id)
	if err != nil {
		return nil, err
	}
	if doc.AccountID != a.AccountID {
		a.refused(ctx, doc, "another account")
		return nil, ErrOtherAccount
	}
	ok, err := a.Instances.InService(ctx, doc.InstanceID)
	if err != nil {
		return nil, fmt.Errorf("look up instance %s in the Windows host group: %w", doc.InstanceID, err)
	}
	if !ok {
		a.refused(ctx, doc, "not in service in the group")
		return nil, ErrNotInGroup
	}
	return &kiln.Agent{Credential: kiln.Credential{ID: doc.InstanceID, Name: doc.InstanceID}, Pool: kiln.HostedPoolWin64, Hosted: true}, nil
}

func (a *Authenticator) refused(ctx context.Context, doc *Document, why string) {
	log := a.Logger
	if log == nil {
		log = slog.Default()
	}
	log.WarnContext(ctx, "a hosted host's claim was refused", slog.String("instance_id", doc.InstanceID),
		slog.String("account_id", doc.AccountID), slog.String("reason", why))
}
