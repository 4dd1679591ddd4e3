package github

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/kilnbuild/kiln/shared/buildlog"
	"github.com/kilnbuild/kiln/shared/diagnostics"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// checksClient is what StatusPoster asks of GitHub for check runs (a *Client).
type checksClient interface {
	CanWriteChecks(ctx context.Context, installationID int64) (bool, error)
	CreateCheckRun(ctx context.Context, installationID int64, fullName string, run CheckRun) (int64, error)
	UpdateCheckRun(ctx context.Context, installationID int64, fullName string, id int64, run CheckRun) error
	FindCheckRun(ctx context.Context, installationID int64, fullName, sha, name, externalID string) (int64, bool, error)
}

// LogReader reads a build's log from sequence number from on, up to max lines.
type LogReader interface {
	Read(ctx context.Context, orgID, buildID string, from int64, max int) ([]buildlog.Line, error)
}

// settingGetter reads the setting a build was triggered from.
type settingGetter interface {
	GetBuildSetting(ctx context.Context, orgID, projectID, id string) (*kiln.BuildSetting, error)
}

// MaxAnnotations is how many annotations a build's check run gets at most, in requests of
// MaxAnnotationsPerRequest; the summary says how many more the log held.
const MaxAnnotations = 500

// logPage is how many log lines are read at once for annotations: only one page and the
// diagnostics found are held, however long the log.
const logPage = 1000

// maxCheckRunIDs bounds the check run ids remembered (a process that forgot one finds it on
// GitHub).
const maxCheckRunIDs = 4096

// checkRunIDs remembers the check run of each build this process posted.
type checkRunIDs struct {
	mu    sync.Mutex
	ids   map[string]int64
	order []string
}

func (c *checkRunIDs) get(buildID string) (int64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	id, ok := c.ids[buildID]
	return id, ok
}

func (c *checkRunIDs) put(buildID string, id int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ids == nil {
		c.ids = map[string]int64{}
	}
	if _, ok := c.ids[buildID]; !ok {
		c.order = append(c.order, buildID)
	}
	c.ids[buildID] = id
	for len(c.order) > maxCheckRunIDs {
		delete(c.ids, c.order[0])
		c.order = c.order[1:]
	}
}

// CheckRunOf is the check run of a build as it is, without annotations: queued while pending,
// in_progress while running, then completed with success (complete), failure (failed) or
// cancelled (cancelled, or superseded by a newer build: it did not judge the commit).
func (p *StatusPoster) CheckRunOf(b *kiln.Build) CheckRun {
	run := CheckRun{Name: checkName(b), HeadSHA: b.Commit, ExternalID: b.ID, DetailsURL: p.buildLink(b)}
	if b.StartedAt != nil {
		run.StartedAt = *b.StartedAt
	}
	build := buildWords(b)
	switch {
	case b.Status == kiln.StatusComplete:
		run.Conclusion, run.Title = ConclusionSuccess, build+" completed"
	case b.Status == kiln.StatusSuperseded:
		run.Conclusion, run.Title = ConclusionCancelled, build+" was superseded by a newer one"
	case b.Status == kiln.StatusFailed && b.FailureReason == "cancelled":
		run.Conclusion, run.Title = ConclusionCancelled, build+" was cancelled"
	case b.Status == kiln.StatusFailed:
		run.Conclusion, run.Title = ConclusionFailure, build+" failed"
	case b.Status == kiln.StatusRunning:
		run.Status, run.Title = CheckInProgress, build+" is running"
	default:
		run.Status, run.Title = CheckQueued, build+" is queued"
	}
	if run.Conclusion != "" {
		run.Status = CheckCompleted
		run.CompletedAt = time.Now()
		if b.FinishedAt != nil {
			run.CompletedAt = *b.FinishedAt
		}
	}
	run.Summary = summaryOf(b, build, run.DetailsURL)
	return run
}

// summaryOf is a check run's markdown summary.
func summaryOf(b *kiln.Build, build, link string) string {
	var s strings.Builder
	fmt.Fprintf(&s, "**%s** · %s · %s", build, b.Platform, b.BuildType)
	if b.Branch != "" {
		fmt.Fprintf(&s, " · branch `%s`", strings.ReplaceAll(b.Branch, "`", ""))
	}
	s.WriteString("\n\n")
	if d := b.DurationMs(); d != nil {
		fmt.Fprintf(&s, "- Duration: %s\n", (time.Duration(*d) * time.Millisecond).Round(time.Second))
	}
	if b.Status == kiln.StatusFailed && b.FailureReason != "cancelled" && b.FailureReason != "" {
		fmt.Fprintf(&s, "- Failure: %s\n", b.FailureReason)
	}
	if link != "" {
		fmt.Fprintf(&s, "- [The build in kiln](%s)\n", link)
	}
	return s.String()
}

// sendCheckRun creates or moves the build's check run; at the end it adds the annotations of the
// errors and warnings in its log.
func (p *StatusPoster) sendCheckRun(ctx context.Context, inst int64, proj *kiln.Project, job statusJob) {
	b := &job.build
	run := p.CheckRunOf(b)
	log := p.log().With(slog.String("build_id", b.ID), slog.String("org_id", b.OrganizationID), slog.String("check_status", run.Status))
	var anns []Annotation
	if run.Status == CheckCompleted {
		var note string
		anns, note = p.annotations(ctx, proj, b)
		run.Summary += note
	}
	first := anns[:min(len(anns), MaxAnnotationsPerRequest)]
	run.Annotations = first
	id, known := p.checkRuns.get(b.ID)
	if !known && !job.created {
		var err error
		id, known, err = within(ctx, p.timeout(), func(ctx context.Context) (int64, bool, error) {
			return p.GitHub.FindCheckRun(ctx, inst, proj.RepoLink, b.Commit, run.Name, b.ID)
		})
		if err != nil {
			log.WarnContext(ctx, "check run: find it", slog.String("error", err.Error()))
			return
		}
	}
	if known {
		err := p.call(ctx, func(ctx context.Context) error { return p.GitHub.UpdateCheckRun(ctx, inst, proj.RepoLink, id, run) })
		if err != nil {
			log.WarnContext(ctx, "check run not updated", slog.String("error", err.Error()))
			return
		}
	} else {
		var err error
		id, _, err = within(ctx, p.timeout(), func(ctx context.Context) (int64, bool, error) {
			id, err := p.GitHub.CreateCheckRun(ctx, inst, proj.RepoLink, run)
			return id, true, err
		})
		if err != nil {
			log.WarnContext(ctx, "check run not created", slog.String("error", err.Error()))
			return
		}
		p.checkRuns.put(b.ID, id)
	}
	// The rest of the annotations, 50 a request: an update adds to the run's annotations.
	for rest := anns[len(first):]; len(rest) > 0; {
		batch := rest[:min(len(rest), MaxAnnotationsPerRequest)]
		rest = rest[len(batch):]
		more := CheckRun{Name: run.Name, Title: run.Title, Summary: run.Summary, Annotations: batch}
		if err := p.call(ctx, func(ctx context.Context) error { return p.GitHub.UpdateCheckRun(ctx, inst, proj.RepoLink, id, more) }); err != nil {
			log.WarnContext(ctx, "check run annotations not added", slog.Int("left", len(rest)+len(batch)), slog.String("error", err.Error()))
			return
		}
	}
}

// annotations reads the build's log, a page at a time, for its errors and warnings, and returns
// them with a note for the summary.
func (p *StatusPoster) annotations(ctx context.Context, proj *kiln.Project, b *kiln.Build) ([]Annotation, string) {
	if p.Logs == nil {
		return nil, ""
	}
	timeout := p.AnnotateTimeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	uproject := proj.UprojectPath
	if p.Settings != nil {
		if st, err := p.Settings.GetBuildSetting(ctx, b.OrganizationID, b.ProjectID, b.BuildSettingID); err == nil && st.UprojectPath != "" {
			uproject = st.UprojectPath
		}
	}
	if uproject == "" {
		return nil, "" // nowhere to put an annotation without a file
	}
	col := diagnostics.New(uproject, MaxAnnotations)
	var readErr error
	for from := int64(1); ; {
		lines, err := p.Logs.Read(ctx, b.OrganizationID, b.ID, from, logPage)
		if err != nil {
			readErr = err
			break
		}
		for _, l := range lines {
			col.Add(l.Message)
		}
		if len(lines) < logPage {
			break
		}
		from = lines[len(lines)-1].Seq + 1
	}
	res := col.Result()
	anns := make([]Annotation, 0, len(res.Diagnostics))
	for _, d := range res.Diagnostics {
		level := LevelWarning
		if d.Severity == diagnostics.Error {
			level = LevelFailure
		}
		anns = append(anns, Annotation{Path: d.Path, StartLine: d.Line, EndLine: d.Line, StartColumn: d.Column, EndColumn: d.Column,
			Level: level, Message: d.Message})
	}
	var note strings.Builder
	if res.Errors+res.Warnings > 0 {
		fmt.Fprintf(&note, "\n%d %s and %d %s in the log", res.Errors, plural(res.Errors, "error"), res.Warnings, plural(res.Warnings, "warning"))
		if res.Dropped > 0 {
			fmt.Fprintf(&note, "; the first %d are annotated (at most %d), %d more are not", len(anns), MaxAnnotations, res.Dropped)
		}
		if res.Skipped > 0 {
			fmt.Fprintf(&note, "; %d %s outside the repository not annotated", res.Skipped, plural(res.Skipped, "warning"))
		}
		note.WriteString(".\n")
	}
	if readErr != nil {
		p.log().WarnContext(ctx, "check run: read the build's log", slog.String("build_id", b.ID), slog.String("error", readErr.Error()))
		note.WriteString("\nThe log could not be read to the end: the annotations may be incomplete.\n")
	}
	return anns, note.String()
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

func (p *StatusPoster) timeout() time.Duration {
	if p.Timeout > 0 {
		return p.Timeout
	}
	return 10 * time.Second
}

// call runs one request within the poster's timeout.
func (p *StatusPoster) call(ctx context.Context, f func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, p.timeout())
	defer cancel()
	return f(ctx)
}

func within(ctx context.Context, timeout time.Duration, f func(ctx context.Context) (int64, bool, error)) (int64, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return f(ctx)
}
