package builds

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/kilnbuild/kiln/shared/artifacts"
	"github.com/kilnbuild/kiln/shared/deploy"
	"github.com/kilnbuild/kiln/shared/keyring"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
	"github.com/kilnbuild/kiln/shared/wake"
)

// Deliverer pushes complete builds' artifacts to their settings' uploadBuildUrl (auto deploy).
// Its queue is the store (complete builds with autoDeployStatus pending or delivering), so a
// delivery in progress when the service stops resumes after it starts. The build stays complete
// and downloadable whatever happens.
type Deliverer struct {
	Store     store.Store
	Artifacts artifacts.Store
	Client    *http.Client // an outbound-safe client
	Sealer    *keyring.Sealer
	Attempts  int
	Backoff   time.Duration
	Logger    *slog.Logger
	Now       func() time.Time

	wake wake.Signal
}

// Notify wakes the deliverer: a build became ready for delivery.
func (d *Deliverer) Notify() { d.wake.Notify() }

// deliveryPoll is how often the queue is looked at without being woken.
const deliveryPoll = 5 * time.Second

// Run delivers until ctx ends.
func (d *Deliverer) Run(ctx context.Context) {
	for {
		waiting, err := d.Store.BuildsAwaitingDelivery(ctx, 10)
		if err != nil && ctx.Err() == nil {
			d.Logger.ErrorContext(ctx, "list deliveries", slog.String("error", err.Error()))
		}
		for _, b := range waiting {
			if ctx.Err() != nil {
				return
			}
			d.deliver(ctx, b)
		}
		if len(waiting) > 0 {
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-d.wake.C():
		case <-time.After(deliveryPoll):
		}
	}
}

// deliver runs one build's delivery to its end and records the outcome.
func (d *Deliverer) deliver(ctx context.Context, listed *kiln.Build) {
	// The queue's index may lag behind; the build itself is read consistently.
	b, err := d.Store.GetBuild(ctx, listed.OrganizationID, listed.ID)
	if err != nil || b.Status != kiln.StatusComplete ||
		(b.AutoDeployStatus != kiln.AutoDeployPending && b.AutoDeployStatus != kiln.AutoDeployDelivering) {
		return
	}
	logger := d.Logger.With(slog.String("build_id", b.ID), slog.String("org_id", b.OrganizationID))
	st, err := d.Store.GetBuildSetting(ctx, b.OrganizationID, b.ProjectID, b.BuildSettingID)
	if err != nil {
		d.finish(ctx, b, deploy.Result{Error: "the build setting was deleted; nothing to deliver to"})
		return
	}
	if st.UploadBuildURL == "" {
		d.finish(ctx, b, deploy.Result{Error: "the build setting has no uploadBuildUrl"})
		return
	}
	var auth string
	if len(st.UploadBuildAuthHeader) > 0 {
		plain, err := d.Sealer.Open(st.UploadBuildAuthHeader, []byte("build-setting:"+st.ID))
		if err != nil {
			logger.ErrorContext(ctx, "open the upload auth header", slog.String("error", err.Error()))
			d.finish(ctx, b, deploy.Result{Error: "the stored uploadBuildAuthHeader cannot be read; set it again"})
			return
		}
		auth = string(plain)
	}
	a, err := d.Store.GetArtifact(ctx, b.OrganizationID, b.ID)
	if err != nil {
		d.finish(ctx, b, deploy.Result{Error: "the build has no artifact to deliver"})
		return
	}
	if b.AutoDeployStatus != kiln.AutoDeployDelivering {
		b.AutoDeployStatus, b.AutoDeployError = kiln.AutoDeployDelivering, ""
		if err := d.Store.UpdateBuild(ctx, b, kiln.StatusComplete); err != nil {
			logger.ErrorContext(ctx, "mark delivering", slog.String("error", err.Error()))
			return
		}
	}
	attempts := b.AutoDeployAttempts
	res := deploy.Deliver(ctx, d.Client, deploy.Delivery{
		URL: st.UploadBuildURL, Authorization: auth, BuildID: b.ID,
		Metadata: deploy.Metadata{BuildID: b.ID, ProjectID: b.ProjectID, Platform: string(b.Platform), BuildType: string(b.BuildType),
			UEVersion: b.UEVersion, Branch: b.Branch, Commit: b.Commit},
		Artifact: func() (io.ReadCloser, int64, error) {
			obj, err := d.Artifacts.Open(ctx, a.Key)
			if err != nil {
				return nil, 0, err
			}
			return obj, obj.Size(), nil
		},
		Attempts: max(1, d.Attempts-attempts), Backoff: d.Backoff,
		OnFailure: func(n int, cause string) {
			// The API shows a neutral error; the precise cause is for the operator only.
			logger.WarnContext(ctx, "auto deploy attempt failed", slog.Int("attempt", attempts+n), slog.String("cause", cause))
		},
		OnAttempt: func(n int) {
			b.AutoDeployAttempts = attempts + n
			if err := d.Store.UpdateBuild(ctx, b, kiln.StatusComplete); err != nil {
				logger.WarnContext(ctx, "record a delivery attempt", slog.String("error", err.Error()))
			}
		},
	})
	if ctx.Err() != nil {
		return // stopping: it stays delivering and resumes at the next start
	}
	res.Attempts += attempts
	d.finish(ctx, b, res)
	logger.InfoContext(ctx, "auto deploy ended", slog.Bool("succeeded", res.Succeeded), slog.Int("attempts", res.Attempts))
}

func (d *Deliverer) finish(ctx context.Context, b *kiln.Build, res deploy.Result) {
	b.AutoDeployAttempts = max(b.AutoDeployAttempts, res.Attempts)
	if res.Succeeded {
		b.AutoDeployStatus, b.AutoDeployError = kiln.AutoDeploySucceeded, ""
	} else {
		b.AutoDeployStatus, b.AutoDeployError = kiln.AutoDeployFailed, res.Error
	}
	if err := d.Store.UpdateBuild(context.WithoutCancel(ctx), b, kiln.StatusComplete); err != nil {
		d.Logger.ErrorContext(ctx, "record the delivery", slog.String("build_id", b.ID), slog.String("error", err.Error()))
	}
}

// Redeliver queues a complete build's delivery again, with its setting's current destination
// (POST /builds/:id/deploy). A build without an artifact is invalid_state.
func (d *Deliverer) Redeliver(ctx context.Context, orgID, buildID string) (*kiln.Build, error) {
	b, err := d.Store.GetBuild(ctx, orgID, buildID)
	if err != nil {
		return nil, err
	}
	if b.Status != kiln.StatusComplete {
		return nil, kiln.Errorf(kiln.EInvalidState, "only a complete build can be delivered (this one is %s)", b.Status)
	}
	if _, err := d.Store.GetArtifact(ctx, orgID, buildID); err != nil {
		if kiln.IsCode(err, kiln.ENotFound) {
			return nil, kiln.Errorf(kiln.EInvalidState, "the build has no artifact any more (retention deleted it)")
		}
		return nil, err
	}
	if b.AutoDeployStatus == kiln.AutoDeployPending || b.AutoDeployStatus == kiln.AutoDeployDelivering {
		return b, nil // already on its way
	}
	b.AutoDeployStatus, b.AutoDeployError, b.AutoDeployAttempts = kiln.AutoDeployPending, "", 0
	if err := d.Store.UpdateBuild(ctx, b, kiln.StatusComplete); err != nil {
		return nil, fmt.Errorf("redeliver: %w", err)
	}
	d.Notify()
	return b, nil
}
