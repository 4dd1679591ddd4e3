package dynamostore

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/guregu/dynamo/v2"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// installationItem records which organization a GitHub App installation is linked to:
// PK "INSTALLATION#<id>", SK "INSTALLATION". It exists exactly while an organization's
// githubInstallationId names the installation; link and unlink write both in one transaction.
type installationItem struct {
	itemKeys
	InstallationID string `dynamo:"installationId"`
	OrganizationID string `dynamo:"organizationId"`
}

// linkAttempts bounds how often link and unlink read the organization again after another write
// changed its installation between their read and their transaction.
const linkAttempts = 10

// Positions of the writes in the link transaction, for txFailedAt.
const (
	linkPutInstallation = iota
	linkUpdateOrg
)

var errKeptChanging = errors.New("the organization's installation kept changing; try again")

// LinkGitHubInstallation reads the organization, then in one transaction: puts the installation's
// item (only if absent or already this organization's; else github_installation_in_use), sets the
// organization's githubInstallationId (only if it is still the one read) and deletes the item of
// the installation it replaces. When the organization changed in between, it starts over.
func (s *Store) LinkGitHubInstallation(ctx context.Context, orgID, installationID string, at time.Time) (*kiln.Organization, error) {
	if installationID == "" {
		return nil, kiln.Errorf(kiln.EBadRequest, "the installation id is empty")
	}
	for range linkAttempts {
		org, err := s.GetOrganization(ctx, orgID)
		if err != nil {
			return nil, err
		}
		current := org.Integrations.GitHubInstallationID
		if current == installationID {
			return org, nil // already linked: nothing to write
		}
		freeCurrent, err := s.holdsInstallation(ctx, orgID, current)
		if err != nil {
			return nil, wrap("link GitHub installation", err)
		}
		err = s.runTx(ctx, func(tx *dynamo.WriteTx) {
			tx.Put(s.table.Put(&installationItem{
				itemKeys:       itemKeys{PK: installationPK(installationID), SK: installationSK, Type: typeInstallation},
				InstallationID: installationID,
				OrganizationID: orgID,
			}).If("attribute_not_exists($) OR $ = ?", attrPK, "organizationId", orgID))
			tx.Update(s.orgInstallationUpdate(orgID, current, at).Set("githubInstallationId", installationID))
			if freeCurrent {
				tx.Delete(s.freeInstallation(orgID, current))
			}
		})
		failed := txFailedAt(err)
		switch {
		case err == nil:
			return s.GetOrganization(ctx, orgID)
		case failed == nil:
			return nil, wrap("link GitHub installation", err)
		case slices.Contains(failed, linkPutInstallation) && !slices.Contains(failed, linkUpdateOrg):
			return nil, kiln.Errorf(kiln.EGitHubInstallationInUse,
				"GitHub installation %s is linked to another organization", installationID)
		}
		// The organization (or the item of its installation) changed since it was read: read again.
	}
	return nil, wrap("link GitHub installation", errKeptChanging)
}

// UnlinkGitHubInstallation reads the organization and, if it has an installation, removes
// githubInstallationId (only if it is still the one read) and deletes the installation's item in
// one transaction.
func (s *Store) UnlinkGitHubInstallation(ctx context.Context, orgID string, at time.Time) (*kiln.Organization, error) {
	for range linkAttempts {
		org, err := s.GetOrganization(ctx, orgID)
		if err != nil {
			return nil, err
		}
		current := org.Integrations.GitHubInstallationID
		if current == "" {
			return org, nil // nothing linked: nothing to write
		}
		freeCurrent, err := s.holdsInstallation(ctx, orgID, current)
		if err != nil {
			return nil, wrap("unlink GitHub installation", err)
		}
		err = s.runTx(ctx, func(tx *dynamo.WriteTx) {
			tx.Update(s.orgInstallationUpdate(orgID, current, at).Remove("githubInstallationId"))
			if freeCurrent {
				tx.Delete(s.freeInstallation(orgID, current))
			}
		})
		if err == nil {
			return s.GetOrganization(ctx, orgID)
		}
		if txFailedAt(err) == nil {
			return nil, wrap("unlink GitHub installation", err)
		}
	}
	return nil, wrap("unlink GitHub installation", errKeptChanging)
}

// GetOrganizationByInstallation reads the installation's item, then the organization it names.
func (s *Store) GetOrganizationByInstallation(ctx context.Context, installationID string) (*kiln.Organization, error) {
	it, err := getItem[installationItem](ctx, s, "get organization by installation", "organization",
		installationPK(installationID), installationSK)
	if err != nil {
		return nil, err
	}
	org, err := s.GetOrganization(ctx, it.OrganizationID)
	if err != nil {
		return nil, err
	}
	if org.Integrations.GitHubInstallationID != installationID {
		return nil, kiln.NotFound("organization") // unlinked between the two reads
	}
	return org, nil
}

// orgInstallationUpdate sets the organization's updatedAt on the condition that its installation
// is still current ("" for none); the caller adds the change of githubInstallationId.
func (s *Store) orgInstallationUpdate(orgID, current string, at time.Time) *dynamo.Update {
	u := s.table.Update(attrPK, orgPK(orgID)).Range(attrSK, orgSK).Set("updatedAt", toMS(at))
	if current == "" {
		return u.If("attribute_exists($) AND attribute_not_exists($)", attrPK, "githubInstallationId")
	}
	return u.If("$ = ?", "githubInstallationId", current)
}

// freeInstallation deletes an installation's item if it is still the organization's.
func (s *Store) freeInstallation(orgID, installationID string) *dynamo.Delete {
	return s.table.Delete(attrPK, installationPK(installationID)).Range(attrSK, installationSK).
		If("$ = ?", "organizationId", orgID)
}

// holdsInstallation reports whether the installation's item names the organization. It normally
// does whenever the organization names the installation; checking lets link and unlink repair an
// organization whose githubInstallationId was written without the item (as UpdateOrganization did
// before installations had items) instead of failing on the delete's condition forever.
func (s *Store) holdsInstallation(ctx context.Context, orgID, installationID string) (bool, error) {
	if installationID == "" {
		return false, nil
	}
	var it installationItem
	err := s.readItem(ctx, installationPK(installationID), installationSK, &it)
	if isNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return it.OrganizationID == orgID, nil
}
