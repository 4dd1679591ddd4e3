package buildsteps

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kilnbuild/kiln/shared/perforce"
)

// PerforceSource is a Perforce stream to build from.
type PerforceSource struct {
	// Client talks to the organization's server with its saved credentials.
	Client *perforce.Client
	// WorkspaceName names the client workspace on the server. The caller keeps one per
	// (project, stream) together with the checkout's Workspace directory, its root.
	WorkspaceName string
	// Stream is the stream to build (//depot/stream), or with Classic the depot directory
	// (//depot/Game) whose files a classic depot project builds.
	Stream  string
	Classic bool
	// Changelist is the submitted changelist to build; "" builds the stream's latest one.
	Changelist string
}

// workspaceMarker is the file in a workspace directory that says which client workspace (and
// server) its files came from.
const workspaceMarker = ".kiln-p4-workspace"

// syncLinesLogged is how many of p4's per-file sync lines go to the build log; the rest are
// counted. A first sync of a game stream lists hundreds of thousands of files.
const syncLinesLogged = 200

// checkoutPerforce brings the workspace to the changelist to build: the stream must exist, the
// client workspace is saved (made on first use), the changelist must be submitted (the latest
// one in the workspace's view when none is asked for, so that a submit to a path the stream
// imports counts too), and the whole view is synced, which transfers only what changed since the
// last build in it. Files that are not in the depot (Unreal's Intermediate/ and DerivedDataCache/
// among them) stay, as p4 leaves them.
func (a *Steps) checkoutPerforce(ctx context.Context, in CheckoutInput, r Reporter) (CheckoutOutput, error) {
	src := *in.Perforce
	if src.Client == nil {
		return CheckoutOutput{}, errors.New("agent: checkout: no Perforce client")
	}
	if src.Changelist != "" && !perforce.IsChange(src.Changelist) {
		return CheckoutOutput{}, fmt.Errorf("agent: checkout: invalid changelist %q", src.Changelist)
	}
	ws, err := filepath.Abs(in.Workspace)
	if err != nil || in.Workspace == "" {
		return CheckoutOutput{}, fmt.Errorf("agent: checkout: workspace %q: %v", in.Workspace, err)
	}
	if err := os.MkdirAll(ws, 0o755); err != nil {
		return CheckoutOutput{}, fmt.Errorf("agent: checkout: %w", err)
	}
	log := a.logger().With("workspace", ws, "stream", src.Stream, "changelist", src.Changelist)
	log.InfoContext(ctx, "agent: perforce sync started")
	c := src.Client

	var exists bool
	if src.Classic {
		var dirs []string
		dirs, err = c.Dirs(ctx, src.Stream)
		exists = len(dirs) > 0
	} else {
		exists, err = c.StreamExists(ctx, src.Stream)
	}
	if err != nil {
		return CheckoutOutput{}, p4Failure(ctx, r, err, "")
	}
	if !exists {
		what := "stream"
		if src.Classic {
			what = "depot path"
		}
		return CheckoutOutput{}, fail(ctx, r, StageSync, nil, "sync failed: the %s %s does not exist on the Perforce server", what, src.Stream)
	}
	workspace := perforce.Workspace{Name: src.WorkspaceName, Root: ws, Stream: src.Stream, Classic: src.Classic}
	if err := c.SaveWorkspace(ctx, workspace); err != nil {
		return CheckoutOutput{}, p4Failure(ctx, r, err, fmt.Sprintf("the stream %s does not exist on the Perforce server", src.Stream))
	}
	change := src.Changelist
	if change == "" {
		if change, err = c.LatestChangeIn(ctx, workspace); err != nil {
			return CheckoutOutput{}, p4Failure(ctx, r, err, fmt.Sprintf("the stream %s has no submitted changelist", src.Stream))
		}
	}
	desc, err := c.Describe(ctx, change)
	if err != nil {
		return CheckoutOutput{}, p4Failure(ctx, r, err, fmt.Sprintf("changelist %s does not exist on the Perforce server", change))
	}
	if desc.Status != "submitted" {
		return CheckoutOutput{}, fail(ctx, r, StageSync, nil, "sync failed: changelist %s is %s, not submitted", change, desc.Status)
	}

	// The server remembers what each workspace has. A directory that never had this workspace's
	// files, or lost them, gets every file again; otherwise a sync would trust the server's
	// record and transfer nothing.
	marker := filepath.Join(ws, workspaceMarker)
	identity := src.WorkspaceName + "@" + c.Address + "\n"
	force := false
	if b, err := os.ReadFile(marker); err != nil || string(b) != identity {
		force = true
		if err := os.Remove(marker); err != nil && !errors.Is(err, os.ErrNotExist) {
			return CheckoutOutput{}, fmt.Errorf("agent: checkout: %w", err)
		}
	}
	// A directory a build replaced with a link must not take the sync's writes (it runs as kiln):
	// such links go, and every file is synced again, which brings back a link the depot holds.
	links, err := removeDirLinks(ws)
	if err != nil {
		return CheckoutOutput{}, fmt.Errorf("agent: checkout: remove links to directories: %w", err)
	}
	switch {
	case links > 0:
		force = true
		logf(ctx, r, LevelWarn, "The workspace held %d symbolic links to directories, which a sync must not write through: they were removed, and every file is synced again", links)
		logf(ctx, r, LevelInfo, "Syncing %s@%s into workspace %s (every file)", src.Stream, change, src.WorkspaceName)
	case force:
		logf(ctx, r, LevelInfo, "Syncing %s@%s into workspace %s (every file: the directory is new to it)", src.Stream, change, src.WorkspaceName)
	default:
		logf(ctx, r, LevelInfo, "Syncing %s@%s into workspace %s", src.Stream, change, src.WorkspaceName)
	}
	logged := 0
	n, err := c.Sync(ctx, workspace, change, force, func(line string) {
		if logged < syncLinesLogged {
			logged++
			logf(ctx, r, LevelInfo, "%s", line)
		}
	})
	if err != nil {
		return CheckoutOutput{}, p4Failure(ctx, r, err, fmt.Sprintf("changelist %s does not exist on the Perforce server", change))
	}
	if force {
		if err := os.WriteFile(marker, []byte(identity), 0o644); err != nil {
			return CheckoutOutput{}, fmt.Errorf("agent: checkout: %w", err)
		}
	}
	switch {
	case n == 0:
		logf(ctx, r, LevelInfo, "The workspace already holds %s@%s", src.Stream, change)
	case n > syncLinesLogged:
		logf(ctx, r, LevelInfo, "Synced %s@%s: %d files changed (%d more not listed)", src.Stream, change, n, n-syncLinesLogged)
	default:
		logf(ctx, r, LevelInfo, "Synced %s@%s: %d files changed", src.Stream, change, n)
	}
	subject, _, _ := strings.Cut(desc.Description, "\n")
	logf(ctx, r, LevelInfo, "Checked out changelist %s (%s): %s", change, src.Stream, subject)
	log.InfoContext(ctx, "agent: perforce sync done", "change", change, "files", n)
	return CheckoutOutput{Dir: ws, Commit: change, CommitMessage: desc.Description}, nil
}

// p4Failure turns a failed p4 call into a Failure with a reason for the customer (notFound says
// what is missing when the server answers "no such"), or the context's error when the sync was
// cancelled.
func p4Failure(ctx context.Context, r Reporter, err error, notFound string) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var reason string
	switch {
	case errors.Is(err, perforce.ErrAuth):
		reason = "the Perforce server refused the saved credentials (has the ticket expired?): save new ones with PATCH /organizations/:id/perforce, then trigger a new build"
	case errors.Is(err, perforce.ErrTrust):
		reason = "the Perforce server's ssl fingerprint changed since it was trusted; check the server, then save the credentials again"
	case errors.Is(err, perforce.ErrUnreachable):
		reason = "could not reach the Perforce server"
	case errors.Is(err, perforce.ErrTimeout):
		reason = "the Perforce server did not answer in time"
	case errors.Is(err, perforce.ErrOutsideWorkspace):
		reason = "the Perforce server sent a file to write outside the build's workspace, and kiln refused it; check the stream's paths and the server"
	case errors.Is(err, perforce.ErrNotFound) && notFound != "":
		reason = notFound
	default:
		var pe *perforce.Error
		if !errors.As(err, &pe) {
			return fmt.Errorf("agent: checkout: %w", err)
		}
		reason = "p4 " + pe.Command + " failed: " + pe.Message
	}
	return fail(ctx, r, StageSync, err, "sync failed: %s", reason)
}
