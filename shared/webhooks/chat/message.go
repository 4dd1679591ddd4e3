// Package chat turns build events into the messages of chat services' incoming webhooks: Slack
// (text and blocks) and Discord (content and an embed). A message says which build, of which
// project, ended how, and links to its console page; it never carries a secret. Every value a
// tenant wrote (a project's name, a branch, a failure reason) is escaped for the service, so it
// shows as text: no formatting, link, mention or quote of its own.
package chat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// Message is what a chat message says about a build.
type Message struct {
	Event    kiln.WebhookEvent
	Project  string // the project's name, or its id once deleted
	Number   int64  // 0 for a build without a number
	BuildID  string
	Platform string
	Type     string
	Branch   string
	Revision string // the short commit, or "CL <n>" for a Perforce changelist; "" while unknown
	Status   kiln.BuildStatus
	Duration time.Duration // from start to end; 0 for a build that never ran
	Reason   string        // why a failed build failed
	Link     string        // the console's build page; "" without a public URL
}

// maxReason caps the failure reason a message quotes.
const maxReason = 500

// New describes build b of project p (nil once deleted) for event; publicURL is the service's
// public URL (the console is under /console/), "" for none.
func New(event kiln.WebhookEvent, b *kiln.Build, p *kiln.Project, publicURL string) Message {
	m := Message{Event: event, Project: b.ProjectID, Number: b.Number, BuildID: b.ID, Platform: string(b.Platform),
		Type: string(b.BuildType), Branch: b.Branch, Status: b.Status, Reason: clip(b.FailureReason, maxReason)}
	if p != nil && p.Name != "" {
		m.Project = p.Name
	}
	switch {
	case b.Commit != "":
		m.Revision = b.Commit[:min(len(b.Commit), 7)]
	case b.Changelist != "":
		m.Revision = "CL " + b.Changelist
	}
	if b.StartedAt != nil && b.FinishedAt != nil && b.FinishedAt.After(*b.StartedAt) {
		m.Duration = b.FinishedAt.Sub(*b.StartedAt).Round(time.Second)
	}
	if publicURL != "" {
		m.Link = strings.TrimRight(publicURL, "/") + "/console/builds/" + url.PathEscape(b.ID)
	}
	return m
}

// title is the message's first line, e.g. "Build #12 of Shooter failed", the project's name
// escaped by esc.
func (m Message) title(esc func(string) string) string {
	build := "Build"
	if m.Number > 0 {
		build = fmt.Sprintf("Build #%d", m.Number)
	}
	what := "completed"
	switch m.Event {
	case kiln.EventBuildFailed:
		what = "failed"
	case kiln.EventBuildFixed:
		what = "is fixed: it completed after a failure"
	}
	return fmt.Sprintf("%s of %s %s", build, esc(m.Project), what)
}

// Target is "Win64 shipping", the platform and build type.
func (m Message) Target() string { return strings.TrimSpace(m.Platform + " " + m.Type) }

// Source is "main @ 1a2b3c4", the branch and short revision; "" when neither is known.
func (m Message) Source() string {
	switch {
	case m.Branch != "" && m.Revision != "":
		return m.Branch + " @ " + m.Revision
	default:
		return m.Branch + m.Revision
	}
}

// Took is the duration as "1h2m3s", "" for none.
func (m Message) Took() string {
	if m.Duration <= 0 {
		return ""
	}
	return m.Duration.String()
}

// clip cuts s to at most n bytes on a rune boundary, with "…" when cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// marshal is json.Marshal without HTML escaping: the messages carry links and quoted "<", which
// read better as themselves. Zero-width spaces, which only strings hold, are written as \u200b,
// which reads better than nothing. Either form is the same JSON.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encode a chat message: %w", err)
	}
	return bytes.ReplaceAll(bytes.TrimSuffix(b.Bytes(), []byte("\n")), []byte(zwsp), []byte(`\u200b`)), nil
}
