package webhooks

import (
	"context"
	"encoding/json"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// skippedPayload is the body of a build.skipped event (docs/api.md): the same envelope as the
// build events, with what the trigger would have built instead of a build.
type skippedPayload struct {
	Type           string      `json:"type"`
	CreatedAt      string      `json:"createdAt"`
	OrganizationID string      `json:"organizationId"`
	Data           skippedData `json:"data"`
}

type skippedData struct {
	Skipped skippedTrigger `json:"skipped"`
}

type skippedTrigger struct {
	ProjectID      string  `json:"projectId"`
	BuildSettingID string  `json:"buildSettingId"`
	Trigger        string  `json:"trigger"`
	TriggeredBy    string  `json:"triggeredBy"`
	Branch         *string `json:"branch"`
	Commit         *string `json:"commit"`
	Reason         string  `json:"reason"`
}

// TriggerSkipped records a build.skipped delivery for every active webhook of the organization
// that asked for it.
func (d *Sender) TriggerSkipped(ctx context.Context, s *kiln.SkippedTrigger) {
	if d == nil {
		return
	}
	ctx = context.WithoutCancel(ctx)
	hooks, err := d.Store.ListWebhooks(ctx, s.OrganizationID)
	if err != nil || len(hooks) == 0 {
		return
	}
	defer d.Notify()
	// Chat webhooks are not told of skipped triggers (kiln.ChatEvents).
	d.enqueue(ctx, hooks, s.OrganizationID, kiln.EventBuildSkipped, func(ctx context.Context, now time.Time) ([]byte, error) {
		orNull := func(v string) *string {
			if v == "" {
				return nil
			}
			return &v
		}
		return json.Marshal(skippedPayload{
			Type: string(kiln.EventBuildSkipped), CreatedAt: now.UTC().Format("2006-01-02T15:04:05.000Z"), OrganizationID: s.OrganizationID,
			Data: skippedData{Skipped: skippedTrigger{ProjectID: s.ProjectID, BuildSettingID: s.BuildSettingID, Trigger: string(s.Trigger),
				TriggeredBy: s.TriggeredBy, Branch: orNull(s.Branch), Commit: orNull(s.Commit), Reason: s.Reason}},
		})
	}, nil)
}
