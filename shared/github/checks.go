package github

import (
	"context"
	"time"

	gh "github.com/google/go-github/v62/github"
)

// Check run statuses and conclusions kiln sets.
const (
	CheckQueued     = "queued"
	CheckInProgress = "in_progress"
	CheckCompleted  = "completed"

	ConclusionSuccess   = "success"
	ConclusionFailure   = "failure"
	ConclusionCancelled = "cancelled"
)

// Annotation levels GitHub accepts.
const (
	LevelNotice  = "notice"
	LevelWarning = "warning"
	LevelFailure = "failure"
)

// Limits of GitHub's Checks API.
const (
	// MaxAnnotationsPerRequest: GitHub takes at most 50 annotations per create or update
	// request; more are sent in further updates, which add to the run's annotations.
	MaxAnnotationsPerRequest = 50
	// maxCheckText is the longest output summary GitHub takes (65535 characters).
	maxCheckText = 65535
	// maxAnnotationMessage is the longest annotation message GitHub takes (64 KB).
	maxAnnotationMessage = 64 << 10
	// maxAnnotationTitle is the longest annotation title GitHub takes (255 characters).
	maxAnnotationTitle = 255
)

// CheckRun is a check run kiln creates or updates on a commit.
type CheckRun struct {
	// Name tells kiln's check runs apart on one commit ("kiln/Linux-Shipping").
	Name    string
	HeadSHA string // create only
	// Status is queued, in_progress or completed; Conclusion is set when completed.
	Status, Conclusion string
	DetailsURL         string // "" for none
	ExternalID         string // the build's id
	StartedAt          time.Time
	CompletedAt        time.Time
	// Title and Summary (markdown) are the run's output, sent when Title is set.
	Title, Summary string
	// Annotations are at most MaxAnnotationsPerRequest; an update adds them to the run's.
	Annotations []Annotation
}

// Annotation marks a line of a file of the repository.
type Annotation struct {
	Path                   string // relative to the repository root
	StartLine, EndLine     int
	StartColumn, EndColumn int // 0: the whole line
	Level, Title, Message  string
}

// CanWriteChecks reports whether the installation granted the App "Checks: read and write",
// read from GitHub as the App and cached for 10 minutes.
func (c *Client) CanWriteChecks(ctx context.Context, installationID int64) (bool, error) {
	g, err := c.granted(ctx, installationID)
	return g.checks, err
}

// CreateCheckRun creates a check run on a commit of a repository of the installation and
// returns its id.
func (c *Client) CreateCheckRun(ctx context.Context, installationID int64, fullName string, run CheckRun) (int64, error) {
	owner, repo, err := splitFullName(fullName)
	if err != nil {
		return 0, err
	}
	if len(run.Annotations) > MaxAnnotationsPerRequest {
		return 0, invalidField("annotations", "at most 50 per request")
	}
	cl, err := c.installation(ctx, installationID)
	if err != nil {
		return 0, err
	}
	opts := gh.CreateCheckRunOptions{Name: run.Name, HeadSHA: run.HeadSHA, DetailsURL: optional(run.DetailsURL),
		ExternalID: optional(run.ExternalID), Status: optional(run.Status), Conclusion: optional(run.Conclusion),
		StartedAt: timestamp(run.StartedAt), CompletedAt: timestamp(run.CompletedAt), Output: output(run)}
	got, _, err := cl.Checks.CreateCheckRun(ctx, owner, repo, opts)
	if err != nil {
		return 0, c.failInstallation("create check run", installationID, err, statusErrors{404: notAccessible(fullName)})
	}
	return got.GetID(), nil
}

// UpdateCheckRun updates a check run; its annotations are added to those it has.
func (c *Client) UpdateCheckRun(ctx context.Context, installationID int64, fullName string, id int64, run CheckRun) error {
	owner, repo, err := splitFullName(fullName)
	if err != nil {
		return err
	}
	if len(run.Annotations) > MaxAnnotationsPerRequest {
		return invalidField("annotations", "at most 50 per request")
	}
	cl, err := c.installation(ctx, installationID)
	if err != nil {
		return err
	}
	opts := gh.UpdateCheckRunOptions{Name: run.Name, DetailsURL: optional(run.DetailsURL), ExternalID: optional(run.ExternalID),
		Status: optional(run.Status), Conclusion: optional(run.Conclusion), CompletedAt: timestamp(run.CompletedAt), Output: output(run)}
	if _, _, err := cl.Checks.UpdateCheckRun(ctx, owner, repo, id, opts); err != nil {
		return c.failInstallation("update check run", installationID, err, statusErrors{404: notAccessible(fullName)})
	}
	return nil
}

// maxCheckRunPages bounds FindCheckRun's listing (100 runs a page).
const maxCheckRunPages = 10

// FindCheckRun finds the App's check run named name on a commit whose external id is
// externalID: kiln keeps no check run ids, so a process that did not create the run finds it.
func (c *Client) FindCheckRun(ctx context.Context, installationID int64, fullName, sha, name, externalID string) (int64, bool, error) {
	owner, repo, err := splitFullName(fullName)
	if err != nil {
		return 0, false, err
	}
	cl, err := c.installation(ctx, installationID)
	if err != nil {
		return 0, false, err
	}
	opts := &gh.ListCheckRunsOptions{CheckName: gh.String(name), Filter: gh.String("all"), AppID: gh.Int64(c.cfg.AppID),
		ListOptions: gh.ListOptions{PerPage: 100}}
	for range maxCheckRunPages {
		res, resp, err := cl.Checks.ListCheckRunsForRef(ctx, owner, repo, sha, opts)
		if err != nil {
			return 0, false, c.failInstallation("list check runs", installationID, err, statusErrors{404: notAccessible(fullName)})
		}
		for _, r := range res.CheckRuns {
			if r.GetExternalID() == externalID {
				return r.GetID(), true, nil
			}
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	return 0, false, nil
}

func output(run CheckRun) *gh.CheckRunOutput {
	if run.Title == "" {
		return nil
	}
	out := &gh.CheckRunOutput{Title: gh.String(run.Title), Summary: gh.String(cut(run.Summary, maxCheckText))}
	for _, a := range run.Annotations {
		ann := &gh.CheckRunAnnotation{Path: gh.String(a.Path), StartLine: gh.Int(a.StartLine), EndLine: gh.Int(max(a.EndLine, a.StartLine)),
			AnnotationLevel: gh.String(a.Level), Message: gh.String(cutBytes(a.Message, maxAnnotationMessage))}
		if a.StartColumn > 0 && ann.GetEndLine() == a.StartLine { // GitHub takes columns on one line only
			ann.StartColumn, ann.EndColumn = gh.Int(a.StartColumn), gh.Int(max(a.EndColumn, a.StartColumn))
		}
		if a.Title != "" {
			ann.Title = gh.String(cut(a.Title, maxAnnotationTitle))
		}
		out.Annotations = append(out.Annotations, ann)
	}
	return out
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return gh.String(s)
}

func timestamp(t time.Time) *gh.Timestamp {
	if t.IsZero() {
		return nil
	}
	return &gh.Timestamp{Time: t.UTC()}
}

// cut cuts s to n characters, ending with "…" when it was longer.
func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(append(r[:n-1], '…'))
}

// cutBytes cuts s to at most n bytes at a character boundary, ending with "…" when it was longer.
func cutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	end := n - len("…")
	for end > 0 && !utf8RuneStart(s[end]) {
		end--
	}
	return s[:end] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
