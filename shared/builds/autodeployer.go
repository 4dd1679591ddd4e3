package builds

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/kilnbuild/kiln/shared/artifacts"
	"github.com/kilnbuild/kiln/shared/buildsettings"
	"github.com/kilnbuild/kiln/shared/delivery"
	"github.com/kilnbuild/kiln/shared/keyring"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// MaxQueuedDeliveries caps redeliveries: POST /builds/:id/deploy is refused with 429
// rate_limited while this many of the organization's builds wait for delivery, and nothing is
// queued.
const MaxQueuedDeliveries = 20

// RedeliverRetryAfter is the Retry-After, in seconds, of a redelivery refused by the cap.
const RedeliverRetryAfter = 60

// leaseMargin is added to an attempt's timeout for its lease: an attempt whose outcome was never
// recorded (the process died) is due again this long after its timeout.
const leaseMargin = 30 * time.Second

// DeliveryStore is what the deliverer keeps in the store.
type DeliveryStore interface {
	GetBuild(ctx context.Context, orgID, id string) (*kiln.Build, error)
	UpdateBuild(ctx context.Context, b *kiln.Build, expected kiln.BuildStatus, fields kiln.BuildFields) error
	DueBuildDeliveries(ctx context.Context, now time.Time, perOrg, limit int) ([]*kiln.Build, error)
	RecordBuildDelivery(ctx context.Context, b *kiln.Build, expectedNextAt time.Time) error
	QueuedBuildDeliveries(ctx context.Context, orgID string, upTo int) (int, error)
	GetBuildSetting(ctx context.Context, orgID, projectID, id string) (*kiln.BuildSetting, error)
	GetArtifact(ctx context.Context, orgID, buildID string) (*kiln.Artifact, error)
}

var _ DeliveryStore = store.Store(nil)

// AutoDeployer pushes complete builds' artifacts to their settings' uploadBuildUrl (auto deploy).
// Its queue is the store: complete builds with autoDeployStatus pending or delivering, each due
// at its AutoDeployNextAt. One attempt is one call (AttemptOne); a failed attempt's retry is a due
// time in the store, never a sleep, so a delivery in progress when the service stops resumes after
// it starts. Run takes due attempts with organizations in turn (delivery.Scheduler). The build stays
// complete and downloadable whatever happens.
type AutoDeployer struct {
	Store DeliveryStore
	// Lifecycle resets a build's delivery for a redeploy (Redeliver).
	Lifecycle *Lifecycle
	Artifacts artifacts.Store
	Client    *http.Client // an outbound-safe client
	Sealer    *keyring.Sealer
	Attempts  int
	Backoff   time.Duration
	// Workers is how many attempts run at once (deploy.DefaultWorkers when < 1); at most
	// deploy.PerOrganization of them are one organization's.
	Workers int
	Logger  *slog.Logger
	Now     func() time.Time
	// Wake, when set, is woken instead of this deliverer's own workers when a build becomes
	// ready for delivery: another process delivers (in AWS, the deliver function, woken by a
	// sweep message on its queue).
	Wake Waker

	scheduler delivery.Scheduler
}

func (d *AutoDeployer) now() time.Time { return kiln.Now(d.Now) }

// Notify wakes the deliverer, or Wake when set: a build became ready for delivery.
func (d *AutoDeployer) Notify() {
	if d.Wake != nil {
		d.Wake.Notify()
		return
	}
	d.scheduler.Notify()
}

// Run delivers until ctx ends.
func (d *AutoDeployer) Run(ctx context.Context) {
	d.scheduler.Queue, d.scheduler.Workers, d.scheduler.Now, d.scheduler.Logger = d, d.Workers, d.now, d.Logger
	d.scheduler.Run(ctx)
}

// Due lists the due deliveries (deploy.Queue).
func (d *AutoDeployer) Due(ctx context.Context, now time.Time, perOrg, limit int) ([]delivery.Job, error) {
	bs, err := d.Store.DueBuildDeliveries(ctx, now, perOrg, limit)
	if err != nil {
		return nil, err
	}
	jobs := make([]delivery.Job, len(bs))
	for i, b := range bs {
		jobs[i] = delivery.Job{OrgID: b.OrganizationID, ID: b.ID}
	}
	return jobs, nil
}

// Attempt is AttemptOne for the scheduler (deploy.Queue).
func (d *AutoDeployer) Attempt(ctx context.Context, j delivery.Job) {
	if err := d.AttemptOne(ctx, j.OrgID, j.ID); err != nil && ctx.Err() == nil {
		d.Logger.ErrorContext(ctx, "auto deploy attempt", slog.String("build_id", j.ID), slog.String("org_id", j.OrgID),
			slog.String("error", err.Error()))
	}
}

// AttemptOne makes one delivery attempt of a build whose delivery is due, and records its
// outcome: succeeded, failed, or delivering with the next attempt's due time. It first claims the
// attempt (a write conditional on the due time it read), so a build listed to two workers is
// attempted once; a build not due, not queued or claimed elsewhere is left alone (nil). This is
// the unit of work a Lambda runs.
func (d *AutoDeployer) AttemptOne(ctx context.Context, orgID, buildID string) error {
	now := d.now()
	b, err := d.Store.GetBuild(ctx, orgID, buildID)
	if err != nil {
		return fmt.Errorf("auto deploy: %w", err)
	}
	if b.Status != kiln.StatusComplete || b.AutoDeployNextAt.After(now) ||
		(b.AutoDeployStatus != kiln.AutoDeployPending && b.AutoDeployStatus != kiln.AutoDeployDelivering) {
		return nil
	}
	logger := d.Logger.With(slog.String("build_id", b.ID), slog.String("org_id", b.OrganizationID))
	job, failure := d.prepare(ctx, logger, b)
	if failure != "" {
		end := *b
		end.AutoDeployStatus, end.AutoDeployError, end.AutoDeployNextAt = kiln.AutoDeployFailed, failure, time.Time{}
		return ignoreTaken(d.Store.RecordBuildDelivery(ctx, &end, b.AutoDeployNextAt))
	}
	if b.AutoDeployStatus == kiln.AutoDeployDelivering && b.AutoDeployAttempts >= d.attempts() {
		// The last attempt was claimed and never recorded its end: it was cut off (a Lambda's
		// time limit, a crash) and would be every time, so the delivery ends here.
		end := *b
		end.AutoDeployStatus, end.AutoDeployError, end.AutoDeployNextAt = kiln.AutoDeployFailed, ReasonDeliveryCutOff, time.Time{}
		logger.WarnContext(ctx, "auto deploy failed: its last attempt never ended", slog.Int("attempts", b.AutoDeployAttempts))
		return ignoreTaken(d.Store.RecordBuildDelivery(ctx, &end, b.AutoDeployNextAt))
	}
	claimed := *b
	claimed.AutoDeployStatus, claimed.AutoDeployError = kiln.AutoDeployDelivering, ""
	claimed.AutoDeployAttempts++
	claimed.AutoDeployNextAt = now.Add(delivery.AttemptTimeout(job.size) + leaseMargin)
	if err := d.Store.RecordBuildDelivery(ctx, &claimed, b.AutoDeployNextAt); err != nil {
		return ignoreTaken(err)
	}
	n := claimed.AutoDeployAttempts
	job.delivery.OnFailure = func(cause string) {
		// The API shows a neutral error; the precise cause is for the operator only.
		logger.WarnContext(ctx, "auto deploy attempt failed", slog.Int("attempt", n), slog.String("cause", cause))
	}
	res := delivery.Deliver(ctx, d.Client, job.delivery)
	out := claimed
	wait, again := delivery.Schedule(res, n, d.Attempts, d.Backoff)
	switch {
	case ctx.Err() != nil:
		// Stopping: due again at once, so that it resumes when the service starts.
		out.AutoDeployNextAt = time.Time{}
	case res.Succeeded:
		out.AutoDeployStatus, out.AutoDeployNextAt = kiln.AutoDeploySucceeded, time.Time{}
	case again:
		out.AutoDeployNextAt = d.now().Add(wait)
	default:
		out.AutoDeployStatus, out.AutoDeployError, out.AutoDeployNextAt = kiln.AutoDeployFailed, res.Error, time.Time{}
	}
	if err := d.Store.RecordBuildDelivery(context.WithoutCancel(ctx), &out, claimed.AutoDeployNextAt); err != nil {
		return ignoreTaken(err)
	}
	if ctx.Err() == nil {
		logger.InfoContext(ctx, "auto deploy attempt ended", slog.Int("attempt", n), slog.String("status", string(out.AutoDeployStatus)),
			slog.Time("next_attempt_at", out.AutoDeployNextAt))
	}
	return nil
}

// ReasonDeliveryCutOff is the autoDeployError of a delivery whose last attempt never ended.
const ReasonDeliveryCutOff = "the delivery did not finish: its last attempt was cut off before it ended"

// attempts is how many attempts a delivery gets.
func (d *AutoDeployer) attempts() int {
	if d.Attempts < 1 {
		return delivery.DefaultAttempts
	}
	return d.Attempts
}

// ignoreTaken drops invalid_state: another worker claimed or recorded the attempt.
func ignoreTaken(err error) error {
	if kiln.IsCode(err, kiln.EInvalidState) {
		return nil
	}
	return err
}

// deliveryJob is a build's delivery, ready for an attempt.
type deliveryJob struct {
	delivery delivery.Delivery
	size     int64
}

// prepare finds a build's destination and artifact; failure says why there is nothing to deliver
// (the delivery fails for good).
func (d *AutoDeployer) prepare(ctx context.Context, logger *slog.Logger, b *kiln.Build) (deliveryJob, string) {
	st, err := d.Store.GetBuildSetting(ctx, b.OrganizationID, b.ProjectID, b.BuildSettingID)
	if err != nil {
		return deliveryJob{}, "the build setting was deleted; nothing to deliver to"
	}
	if st.UploadBuildURL == "" {
		return deliveryJob{}, "the build setting has no uploadBuildUrl"
	}
	var auth string
	if len(st.UploadBuildAuthHeader) > 0 {
		plain, err := d.Sealer.Open(st.UploadBuildAuthHeader, buildsettings.SealAD(st.ID))
		if err != nil {
			logger.ErrorContext(ctx, "open the upload auth header", slog.String("error", err.Error()))
			return deliveryJob{}, "the stored uploadBuildAuthHeader cannot be read; set it again"
		}
		auth = string(plain)
	}
	a, err := d.Store.GetArtifact(ctx, b.OrganizationID, b.ID)
	if err != nil {
		return deliveryJob{}, "the build has no artifact to deliver"
	}
	return deliveryJob{size: a.SizeBytes, delivery: delivery.Delivery{
		URL: st.UploadBuildURL, Authorization: auth, BuildID: b.ID,
		Metadata: delivery.Metadata{BuildID: b.ID, ProjectID: b.ProjectID, Platform: string(b.Platform), BuildType: string(b.BuildType),
			UEVersion: b.UEVersion, Branch: b.Branch, Commit: b.Commit},
		Artifact: func() (io.ReadCloser, int64, error) {
			obj, err := d.Artifacts.Open(ctx, a.Key)
			if err != nil {
				return nil, 0, err
			}
			return obj, obj.Size(), nil
		},
	}}, ""
}

// Redeliver queues a complete build's delivery again, due now, with its setting's current
// destination (POST /builds/:id/deploy). A build without an artifact, or whose setting has auto
// deploy off (autoDeploy false, or no uploadBuildUrl), is invalid_state; while
// MaxQueuedDeliveries of the organization's builds wait for delivery it is rate_limited and
// nothing is queued.
func (d *AutoDeployer) Redeliver(ctx context.Context, orgID, buildID string) (*kiln.Build, error) {
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
	st, err := d.Store.GetBuildSetting(ctx, orgID, b.ProjectID, b.BuildSettingID)
	if kiln.IsCode(err, kiln.ENotFound) {
		return nil, kiln.Errorf(kiln.EInvalidState, "the build's setting was deleted: there is nothing to deliver to")
	} else if err != nil {
		return nil, err
	}
	if !st.AutoDeploy || st.UploadBuildURL == "" {
		return nil, kiln.Errorf(kiln.EInvalidState, "the build's setting has auto deploy off: turn autoDeploy on with an uploadBuildUrl to deliver")
	}
	if b.AutoDeployStatus == kiln.AutoDeployPending || b.AutoDeployStatus == kiln.AutoDeployDelivering {
		return b, nil // already on its way
	}
	queued, err := d.Store.QueuedBuildDeliveries(ctx, orgID, MaxQueuedDeliveries)
	if err != nil {
		return nil, fmt.Errorf("redeliver: %w", err)
	}
	if queued >= MaxQueuedDeliveries {
		return nil, kiln.Errorf(kiln.ERateLimited, "%d of the organization's builds are waiting for delivery (the most allowed); retry after %d s",
			MaxQueuedDeliveries, RedeliverRetryAfter)
	}
	b, err = d.Lifecycle.ResetDelivery(ctx, orgID, buildID)
	if err != nil {
		return nil, fmt.Errorf("redeliver: %w", err)
	}
	d.Notify()
	return b, nil
}
