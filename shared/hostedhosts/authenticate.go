package hostedhosts

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// InService answers whether an instance is in service in one of the hosts' Auto Scaling groups
// (Group does).
type InService interface {
	InService(ctx context.Context, instanceID string) (bool, error)
}

// Authenticator tells whether a claim's identity is one of kiln's hosted hosts: a document
// AWS signed (Certificates), of the deployment's account, of an instance in service in one of
// the hosts' groups. It returns the host as an agent of that group's hosted pool (a Windows host
// claims Win64 builds only, a Linux host Linux builds only); the dispatcher then allows the
// instance one claim ever.
type Authenticator struct {
	Certificates Certificates
	// AccountID is the deployment's AWS account.
	AccountID string
	// Groups are the hosts' Auto Scaling groups, one per hosted pool.
	Groups []PoolGroup
	Logger *slog.Logger
}

// PoolGroup is the Auto Scaling group of one hosted pool's hosts (kiln.HostedPoolWin64,
// kiln.HostedPoolLinux).
type PoolGroup struct {
	Pool      string
	Instances InService
}

// Refusals of identities that verify but are not kiln's hosts.
var (
	ErrOtherAccount = kiln.Errorf(kiln.EInsufficientScope, "the instance belongs to another AWS account than this deployment's")
	ErrNotInGroup   = kiln.Errorf(kiln.EInsufficientScope, "the instance is not in service in any of this deployment's host groups")
)

// Authenticate checks the identity and returns its host as an agent of its group's pool.
func (a *Authenticator) Authenticate(ctx context.Context, id Identity) (*kiln.Agent, error) {
	doc, err := a.Certificates.Verify(id)
	if err != nil {
		return nil, err
	}
	if doc.AccountID != a.AccountID {
		a.refused(ctx, doc, "another account")
		return nil, ErrOtherAccount
	}
	for _, g := range a.Groups {
		ok, err := g.Instances.InService(ctx, doc.InstanceID)
		if err != nil {
			return nil, fmt.Errorf("look up instance %s in the host group of pool %s: %w", doc.InstanceID, g.Pool, err)
		}
		if ok {
			return &kiln.Agent{Credential: kiln.Credential{ID: doc.InstanceID, Name: doc.InstanceID}, Pool: g.Pool, Hosted: true}, nil
		}
	}
	a.refused(ctx, doc, "not in service in a host group")
	return nil, ErrNotInGroup
}

func (a *Authenticator) refused(ctx context.Context, doc *Document, why string) {
	log := a.Logger
	if log == nil {
		log = slog.Default()
	}
	log.WarnContext(ctx, "a hosted host's claim was refused", slog.String("instance_id", doc.InstanceID),
		slog.String("account_id", doc.AccountID), slog.String("reason", why))
}
