// Package notify tells people about their builds by email: it renders the message for a build that
// ended and sends it through a Sender (SMTP).
package notify

import (
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// Message is one plain-text email to one recipient. To is a bare address (dev@example.com);
// Subject and Text are UTF-8. The sender encodes them for the wire.
type Message struct {
	To            string
	Subject, Text string
}

// maxCommitMessage bounds the commit summary shown in a notification, in characters.
const maxCommitMessage = 120

// BuildEnded renders the notification for a build that ended (complete or failed) of a setting
// with notifyOnComplete. p is nil when the project has been deleted and s when the setting has;
// the build itself records what the message needs. downloadURL is the signed link to the
// artifact, shown for complete builds when not empty.
func BuildEnded(b *kiln.Build, p *kiln.Project, s *kiln.BuildSetting, to kiln.User, downloadURL string) Message {
	project := "deleted project"
	if p != nil && oneLine(p.Name) != "" {
		project = oneLine(p.Name)
	}
	target := strings.TrimSpace(oneLine(string(b.Platform)) + " " + oneLine(string(b.BuildType)))
	status := oneLine(string(b.Status))
	build := project // the project and the build's number in it: "Shooter #12"
	if b.Number > 0 {
		build += " " + b.Label()
	}

	var t strings.Builder
	fmt.Fprintf(&t, "Build %s: %s · %s\n\n", status, build, target)
	line := func(label, value string) {
		if value != "" {
			fmt.Fprintf(&t, "%-13s%s\n", label+":", value)
		}
	}
	if p != nil {
		line("Project", project)
		line("Repository", oneLine(p.RepoLink))
	} else {
		line("Project", "(deleted) "+oneLine(b.ProjectID))
	}
	line("Setting", target)
	perforce := isPerforce(b, p, s)
	if perforce {
		line("Stream", oneLine(ref(b, s, true)))
	} else {
		line("Branch", oneLine(ref(b, s, false)))
	}
	if b.UEVersion != "" {
		line("Engine", "UE "+oneLine(b.UEVersion))
	}
	line("Status", status)
	switch d := b.DurationMs(); {
	case d != nil:
		line("Duration", HumanDuration(time.Duration(*d)*time.Millisecond))
	case b.StartedAt == nil:
		line("Duration", "did not start")
	}
	line(commitLabel(perforce), commitSummary(b, perforce))
	if b.Status == kiln.StatusFailed {
		reason := strings.TrimSpace(b.FailureReason)
		if reason == "" {
			reason = "unknown"
		}
		// A reason may hold several lines (a tool's output); keep them, aligned under the first.
		line("Reason", strings.ReplaceAll(normalizeNewlines(reason), "\n", "\n"+strings.Repeat(" ", 13)))
	}
	if b.Status == kiln.StatusComplete {
		line("Download", oneLine(downloadURL))
	}
	if b.Number > 0 {
		line("Build", b.Label())
	}
	line("Build ID", oneLine(b.ID))
	t.WriteString("\n-- \nYou receive this email because notifications are on for this build setting in kiln.\n")

	return Message{
		To:      strings.TrimSpace(to.Email),
		Subject: fmt.Sprintf("[kiln] %s · %s · %s", build, target, status),
		Text:    t.String(),
	}
}

// HumanDuration renders d rounded to the second: "45s", "12m 5s", "1h 0m 7s".
func HumanDuration(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	sec := int64(d.Round(time.Second) / time.Second)
	h, m, s := sec/3600, sec/60%60, sec%60
	switch {
	case h > 0:
		return fmt.Sprintf("%dh %dm %ds", h, m, s)
	case m > 0:
		return fmt.Sprintf("%dm %ds", m, s)
	default:
		return fmt.Sprintf("%ds", s)
	}
}

// isPerforce reports whether the build came from a Perforce stream, judging by the project, else
// the setting, else the build's ref (stream paths start with //).
func isPerforce(b *kiln.Build, p *kiln.Project, s *kiln.BuildSetting) bool {
	switch {
	case p != nil && p.SourceControl != "":
		return p.SourceControl == kiln.SourcePerforce
	case s != nil && (s.StreamPath != "" || s.Branch != ""):
		return s.StreamPath != ""
	default:
		return strings.HasPrefix(b.Branch, "//")
	}
}

// ref is the branch or stream the build used: the build's own record, else the setting's.
func ref(b *kiln.Build, s *kiln.BuildSetting, perforce bool) string {
	switch {
	case b.Branch != "":
		return b.Branch
	case s == nil:
		return ""
	case perforce:
		return s.StreamPath
	default:
		return s.Branch
	}
}

func commitLabel(perforce bool) string {
	if perforce {
		return "Changelist"
	}
	return "Commit"
}

// commitSummary is the short commit id (or changelist number) and the first line of its message.
func commitSummary(b *kiln.Build, perforce bool) string {
	id := oneLine(b.Commit)
	if perforce && b.Changelist != "" {
		id = oneLine(b.Changelist)
	}
	if !perforce && len(id) > 7 && isHex(id) {
		id = id[:7]
	}
	msg := strings.TrimSpace(oneLine(firstLine(b.CommitMessage)))
	if r := []rune(msg); len(r) > maxCommitMessage {
		msg = string(r[:maxCommitMessage-1]) + "…"
	}
	return strings.TrimSpace(id + " " + msg)
}

func isHex(s string) bool {
	for _, r := range s {
		if !strings.ContainsRune("0123456789abcdefABCDEF", r) {
			return false
		}
	}
	return true
}

func firstLine(s string) string {
	s = strings.TrimSpace(normalizeNewlines(s))
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func normalizeNewlines(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

// oneLine replaces control characters (CR, LF, tabs, …) with spaces, so that a value stays on its
// line of the body and can never break a header.
func oneLine(s string) string {
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD")))
}
