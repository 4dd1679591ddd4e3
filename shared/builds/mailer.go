package builds

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/kilnbuild/kiln/shared/downloads"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/notify"
)

// Mailer emails the user who triggered a build when it ends, if its setting has
// notifyOnComplete. Builds started by a push or a schedule have no such user and send nothing.
type Mailer struct {
	Store     MailerStore
	Sender    notify.Sender
	Downloads downloads.Signer
	Logger    *slog.Logger
	Now       func() time.Time
}

// MailerStore is what the mailer reads.
type MailerStore interface {
	GetBuildSetting(ctx context.Context, orgID, projectID, id string) (*kiln.BuildSetting, error)
	GetMember(ctx context.Context, orgID, userID string) (*kiln.Member, error)
	GetProject(ctx context.Context, orgID, id string) (*kiln.Project, error)
}

// BuildEnded sends the notification of an ended build, if it asks for one.
func (m *Mailer) BuildEnded(ctx context.Context, b *kiln.Build) {
	if m == nil || m.Sender == nil || !b.Status.Terminal() || b.Status == kiln.StatusSuperseded {
		return
	}
	userID, ok := strings.CutPrefix(b.TriggeredBy, "user:")
	if !ok {
		return
	}
	st, err := m.Store.GetBuildSetting(ctx, b.OrganizationID, b.ProjectID, b.BuildSettingID)
	if err != nil || !st.NotifyOnComplete {
		return
	}
	member, err := m.Store.GetMember(ctx, b.OrganizationID, userID)
	if err != nil {
		return
	}
	p, _ := m.Store.GetProject(ctx, b.OrganizationID, b.ProjectID)
	var link string
	if b.Status == kiln.StatusComplete {
		now := time.Now
		if m.Now != nil {
			now = m.Now
		}
		link = m.Downloads.URL(b.OrganizationID, b.ID, now().Add(downloads.Lifetime))
	}
	msg := notify.BuildEnded(b, p, st, member.User, link)
	if err := m.Sender.Send(ctx, msg); err != nil {
		m.Logger.WarnContext(ctx, "send the build notification", slog.String("build_id", b.ID), slog.String("error", err.Error()))
	}
}
