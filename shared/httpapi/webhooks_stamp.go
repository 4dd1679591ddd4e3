package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/kilnbuild/kiln/shared/downloads"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// StampArtifactURL makes the webhooks.Stamp that gives a build.complete delivery
// data.build.artifactUrl: a signed download URL of the build's artifact valid for
// downloads.Lifetime from the attempt, the URL GET /builds/:id/download answers. Every attempt,
// a redelivery's too, gets a fresh one; the stored payload keeps none. A build without an
// artifact (deleted by retention) is sent without one; other events are sent as stored.
func StampArtifactURL(artifact func(ctx context.Context, orgID, buildID string) (*kiln.Artifact, error), signer downloads.Signer) func(ctx context.Context, event kiln.WebhookEvent, payload []byte, now time.Time) ([]byte, error) {
	return func(ctx context.Context, event kiln.WebhookEvent, payload []byte, now time.Time) ([]byte, error) {
		if event != kiln.EventBuildComplete || len(signer.Key) == 0 {
			return payload, nil
		}
		var p webhookPayload
		if err := json.Unmarshal(payload, &p); err != nil {
			return nil, fmt.Errorf("stamp artifactUrl: decode the payload: %w", err)
		}
		b := &p.Data.Build
		if _, err := artifact(ctx, p.OrganizationID, b.ID); kiln.IsCode(err, kiln.ENotFound) {
			b.ArtifactURL = nil
			return json.Marshal(p)
		} else if err != nil {
			return nil, fmt.Errorf("stamp artifactUrl: %w", err)
		}
		u := signer.URL(p.OrganizationID, b.ID, now.Add(downloads.Lifetime).Truncate(time.Second))
		b.ArtifactURL = &u
		return json.Marshal(p)
	}
}
