package dynamostore

import (
	"context"
	"fmt"

	"github.com/guregu/dynamo/v2"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// projectItem is a project: PK "ORG#<org>", SK "PROJECT#<id>"; in GSI1 under
// "ORG#<org>#SOURCE#<github|perforce>" / "PROJECT#<id>" for the list by source control.
type projectItem struct {
	itemKeys
	ID              string        `dynamo:"id"`
	OrganizationID  string        `dynamo:"organizationId"`
	Name            string        `dynamo:"name"`
	Description     string        `dynamo:"description,omitempty"`
	SourceControl   string        `dynamo:"sourceControl"`
	RepoLink        string        `dynamo:"repoLink,omitempty"`
	InstallationID  string        `dynamo:"installationId,omitempty"`
	DefaultBranch   string        `dynamo:"defaultBranch,omitempty"`
	Depot           string        `dynamo:"depot,omitempty"`
	StreamPath      string        `dynamo:"streamPath,omitempty"`
	DepotPath       string        `dynamo:"depotPath,omitempty"`
	UprojectPath    string        `dynamo:"uprojectPath,omitempty"`
	Uproject        *uprojectAttr `dynamo:"uproject,omitempty"`
	LastBuildAt     *int64        `dynamo:"lastBuildAt,omitempty"`
	LastBuildStatus string        `dynamo:"lastBuildStatus,omitempty"`
	CreatedAt       int64         `dynamo:"createdAt"`
	UpdatedAt       int64         `dynamo:"updatedAt"`
}

// uprojectAttr is the detected .uproject file, a map attribute.
type uprojectAttr struct {
	Path          string                `dynamo:"path,allowempty"`
	ProjectName   string                `dynamo:"projectName,allowempty"`
	EngineVersion string                `dynamo:"engineVersion,allowempty"`
	Modules       []kiln.UprojectModule `dynamo:"modules"`
	Plugins       []kiln.UprojectPlugin `dynamo:"plugins"`
}

// projectMutable are the attributes UpdateProject replaces.
var projectMutable = []string{"name", "description", "uproject", "lastBuildAt", "lastBuildStatus", "updatedAt"}

func newProjectItem(p *kiln.Project) *projectItem {
	it := &projectItem{
		itemKeys: itemKeys{
			PK: orgPK(p.OrganizationID), SK: projectSK(p.ID), Type: typeProject,
			GSI1PK: sourcePK(p.OrganizationID, p.SourceControl), GSI1SK: projectSK(p.ID),
		},
		ID: p.ID, OrganizationID: p.OrganizationID, Name: p.Name, Description: p.Description,
		SourceControl: string(p.SourceControl), RepoLink: p.RepoLink, InstallationID: p.InstallationID,
		DefaultBranch: p.DefaultBranch, Depot: p.Depot, StreamPath: p.StreamPath, DepotPath: p.DepotPath,
		UprojectPath: p.UprojectPath, LastBuildAt: toMSPtr(p.LastBuildAt),
		LastBuildStatus: string(p.LastBuildStatus),
		CreatedAt:       toMS(p.CreatedAt), UpdatedAt: toMS(p.UpdatedAt),
	}
	if u := p.Uproject; u != nil {
		it.Uproject = &uprojectAttr{
			Path: u.Path, ProjectName: u.ProjectName, EngineVersion: u.EngineVersion,
			Modules: u.Modules, Plugins: u.Plugins,
		}
	}
	return it
}

func (it *projectItem) project() *kiln.Project {
	p := &kiln.Project{
		ID: it.ID, OrganizationID: it.OrganizationID, Name: it.Name, Description: it.Description,
		SourceControl: kiln.SourceControl(it.SourceControl), RepoLink: it.RepoLink,
		InstallationID: it.InstallationID, DefaultBranch: it.DefaultBranch, Depot: it.Depot,
		StreamPath: it.StreamPath, DepotPath: it.DepotPath, UprojectPath: it.UprojectPath, LastBuildAt: fromMSPtr(it.LastBuildAt),
		LastBuildStatus: kiln.BuildStatus(it.LastBuildStatus),
		CreatedAt:       fromMS(it.CreatedAt), UpdatedAt: fromMS(it.UpdatedAt),
	}
	if u := it.Uproject; u != nil {
		p.Uproject = &kiln.UprojectInfo{
			Path: u.Path, ProjectName: u.ProjectName, EngineVersion: u.EngineVersion,
			Modules: u.Modules, Plugins: u.Plugins,
		}
	}
	return p
}

// CreateProject puts the project, only if its key is free, and adds 1 to the organization's
// project count, only if the count is below max (see attrProjectCount), in one transaction. When
// the organization's condition fails, the organization is missing, at max, or has no count yet
// (stored before the count existed): the last is counted once and the transaction tried again.
func (s *Store) CreateProject(ctx context.Context, p *kiln.Project, max int) error {
	for range 2 {
		err := s.runTx(ctx, func(tx *dynamo.WriteTx) {
			tx.Put(s.table.Put(newProjectItem(p)).If(notExists, attrPK))
			tx.Update(s.orgCounterUpdate(p.OrganizationID, 1, max))
		})
		at := txFailedAt(err)
		if at == nil {
			return wrap("create project", err)
		}
		if at[0] == 0 {
			return kiln.Errorf(kiln.EConflict, "project %s already exists", p.ID)
		}
		_, ok, err := s.projectCount(ctx, p.OrganizationID)
		if err != nil {
			return err
		}
		if ok {
			return store.ProjectLimitReached(max)
		}
		if err := s.initProjectCount(ctx, p.OrganizationID); err != nil {
			return err
		}
	}
	return wrap("create project", fmt.Errorf("organization %s has no project count after initializing it", p.OrganizationID))
}

func (s *Store) GetProject(ctx context.Context, orgID, id string) (*kiln.Project, error) {
	return get(ctx, s, "get project", "project", orgPK(orgID), projectSK(id), (*projectItem).project)
}

// ListProjects queries the organization's partition for SK begins_with "PROJECT#", or, filtered by
// source control, GSI1's partition "ORG#<org>#SOURCE#<sc>"; newest first.
func (s *Store) ListProjects(ctx context.Context, orgID string, f store.ProjectFilter, p store.Page) ([]*kiln.Project, string, error) {
	q := orgPageQuery(orgID, prefixProject, p.After, projectSK(p.After))
	if f.SourceControl != "" {
		q = listQuery{
			index: indexGSI1, pkAttr: attrGSI1PK, skAttr: attrGSI1SK,
			pk: sourcePK(orgID, f.SourceControl), skPrefix: prefixProject,
			start: startKey(p.After, attrPK, orgPK(orgID), attrSK, projectSK(p.After),
				attrGSI1PK, sourcePK(orgID, f.SourceControl), attrGSI1SK, projectSK(p.After)),
		}
	}
	return list(ctx, s, "list projects", q, limit(p), func(it *projectItem) string { return it.ID }, (*projectItem).project)
}

// UpdateProject sets the mutable attributes on the existing item.
func (s *Store) UpdateProject(ctx context.Context, p *kiln.Project) error {
	err := s.updateFields(ctx, orgPK(p.OrganizationID), projectSK(p.ID), newProjectItem(p), projectMutable)
	if isCondFailed(err) {
		return kiln.NotFound("project")
	}
	return wrap("update project", err)
}

// DeleteProject queries the project's settings, then deletes the project (only if it exists) and
// its settings and subtracts 1 from the organization's project count in one transaction. Settings
// beyond what one transaction holds are deleted first, in earlier transactions; the project goes
// last, so a failure leaves it in place to retry.
func (s *Store) DeleteProject(ctx context.Context, orgID, id string) error {
	if _, err := s.GetProject(ctx, orgID, id); err != nil {
		return err
	}
	if err := s.ensureProjectCount(ctx, orgID); err != nil {
		return err
	}
	settings, _, err := queryPage(ctx, s, settingsQuery(orgID, id), 0, func(it *itemKeys) string { return "" })
	if err != nil {
		return wrap("delete project", err)
	}
	for len(settings) > maxTxItems-2 { // the last transaction also holds the project and the count
		n := min(len(settings), maxTxItems)
		batch := settings[:n]
		settings = settings[n:]
		err := s.runTx(ctx, func(tx *dynamo.WriteTx) {
			for _, k := range batch {
				tx.Delete(s.table.Delete(attrPK, k.PK).Range(attrSK, k.SK))
			}
		})
		if err != nil {
			return wrap("delete project settings", err)
		}
	}
	err = s.runTx(ctx, func(tx *dynamo.WriteTx) {
		tx.Delete(s.table.Delete(attrPK, orgPK(orgID)).Range(attrSK, projectSK(id)).If(exists, attrPK))
		tx.Update(s.orgCounterUpdate(orgID, -1, 0))
		for _, k := range settings {
			tx.Delete(s.table.Delete(attrPK, k.PK).Range(attrSK, k.SK))
		}
	})
	if at := txFailedAt(err); at != nil && at[0] == 0 {
		return kiln.NotFound("project")
	}
	return wrap("delete project", err)
}
