package httpapi

import (
	"context"
	"strings"

	"github.com/kilnbuild/kiln/shared/api"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// The kinds of trigger.
const (
	triggerUser     = "user"
	triggerPush     = "push"
	triggerSchedule = "schedule"
	triggerRerun    = "rerun"
)

// renderTrigger reads a build's triggeredBy (user:<id>, push:<commit>, cron, or github:<login> for a
// re-run asked on GitHub) and re-run link.
func renderTrigger(b *kiln.Build) api.BuildTrigger {
	t := api.BuildTrigger{Kind: triggerUser, RerunOf: nullable(b.RerunOf)}
	switch by := b.TriggeredBy; {
	case b.RerunOf != "" && strings.HasPrefix(by, triggeredByGitHub):
		t.Kind, t.Name = triggerRerun, nullable(strings.TrimPrefix(by, triggeredByGitHub)) // a GitHub login, no member
	case b.RerunOf != "":
		t.Kind, t.UserID = triggerRerun, nullable(strings.TrimPrefix(by, "user:"))
	case strings.HasPrefix(by, "user:"):
		t.UserID = nullable(strings.TrimPrefix(by, "user:"))
	case strings.HasPrefix(by, "push:"):
		t.Kind, t.Commit = triggerPush, nullable(strings.TrimPrefix(by, "push:"))
	case by == "cron":
		t.Kind = triggerSchedule
	}
	return t
}

// nameTriggers fills in the names of the users who triggered builds, from the members of the
// organization orgID (each user looked up once); a user who is no longer a member keeps a null
// name. A name-less user is named by email.
func (s *Server) nameTriggers(ctx context.Context, orgID string, bodies ...*api.Build) error {
	names := map[string]*string{}
	for _, b := range bodies {
		if b.Trigger.UserID == nil {
			continue
		}
		id := *b.Trigger.UserID
		name, seen := names[id]
		if !seen {
			m, err := s.orgs.GetMember(ctx, orgID, id)
			switch {
			case kiln.IsCode(err, kiln.ENotFound):
			case err != nil:
				return err
			case m.User.Name != "":
				name = &m.User.Name
			default:
				name = nullable(m.User.Email)
			}
			names[id] = name
		}
		b.Trigger.Name = name
	}
	return nil
}

// itemRefs points at each body of a list, for nameTriggers.
func itemRefs(items []api.Build) []*api.Build {
	refs := make([]*api.Build, len(items))
	for i := range items {
		refs[i] = &items[i]
	}
	return refs
}
