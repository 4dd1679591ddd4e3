package chat

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// maskedLink is a project name that Discord would show as a link to somewhere else.
const maskedLink = "[Reset pw](https://evil.example/p)"

// hostileValues are tenant-made values that would format, link, mention or quote if a message
// quoted them as they are.
var hostileValues = []string{
	maskedLink,
	"@everyone and @here",
	"<@123> <@&456> <#789> <t:1700000000:R> <:kiln:1>",
	"**bold** __underline__ *italic* _italic_ ~~strike~~",
	"`code` and ```go\nfence\n```",
	"# heading\n## smaller\n-# subtext",
	"> quote\n>>> all the rest",
	"||spoiler||",
	"- item\n* item\n1. item",
	"line one\n\nhttps://evil.example/embed",
	"<https://evil.example|click> <!channel> <!here> <!subteam^S1>",
	`back\slash \*not escaped\* & more`,
}

// TestTenantValuesAreEscaped puts each hostile value in each tenant-made field of a build and
// checks that both services' messages quote it only escaped, never as it is.
func TestTenantValuesAreEscaped(t *testing.T) {
	fields := []struct {
		name string
		set  func(b *kiln.Build, p *kiln.Project, v string)
	}{
		{"project", func(_ *kiln.Build, p *kiln.Project, v string) { p.Name = v }},
		{"branch", func(b *kiln.Build, _ *kiln.Project, v string) { b.Branch = v }},
		{"reason", func(b *kiln.Build, _ *kiln.Project, v string) { b.FailureReason = v }},
	}
	services := []struct {
		name   string
		render func(Message) ([]byte, error)
		escape func(string) string
		texts  func(t *testing.T, body []byte) []string
		// special are the characters that make a line act if it is quoted as it is.
		special string
	}{
		{"discord", Discord, discordEscape, discordTexts, discordSpecial},
		{"slack", Slack, slackEscape, slackTexts, "&<>*_~`"},
	}
	start := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)
	for _, f := range fields {
		for i, v := range hostileValues {
			b := &kiln.Build{ID: "kPAbc", Number: 7, ProjectID: "kPProject", Status: kiln.StatusFailed, Platform: kiln.PlatformLinux,
				Branch: "main", Commit: "0123456789", StartedAt: &start, FinishedAt: new(start.Add(time.Minute)), FailureReason: "cook failed"}
			p := &kiln.Project{Name: "Shooter"}
			f.set(b, p, v)
			m := New(kiln.EventBuildFailed, b, p, "https://kiln.example.com")
			for _, s := range services {
				t.Run(fmt.Sprintf("%s/%s/%d", s.name, f.name, i), func(t *testing.T) {
					body, err := s.render(m)
					if err != nil {
						t.Fatal(err)
					}
					texts := strings.Join(s.texts(t, body), "\n")
					if !strings.Contains(texts, s.escape(v)) {
						t.Errorf("the message does not quote %q escaped as %q:\n%s", v, s.escape(v), texts)
					}
					if strings.ContainsAny(v, s.special) && strings.Contains(texts, v) {
						t.Errorf("the message quotes %q as it is:\n%s", v, texts)
					}
				})
			}
		}
	}
}

// discordTexts are the markdown texts of a Discord message, as Discord reads them.
func discordTexts(t *testing.T, body []byte) []string {
	t.Helper()
	var m discordMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	texts := []string{m.Content}
	for _, e := range m.Embeds {
		texts = append(texts, e.Title, e.Description)
		for _, f := range e.Fields {
			texts = append(texts, f.Value)
		}
	}
	return texts
}

// slackTexts are the mrkdwn texts of a Slack message, as Slack reads them.
func slackTexts(t *testing.T, body []byte) []string {
	t.Helper()
	var m slackMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	texts := []string{m.Text}
	for _, b := range m.Blocks {
		if b.Text != nil {
			texts = append(texts, b.Text.Text)
		}
		for _, x := range append(b.Fields, b.Elements...) {
			texts = append(texts, x.Text)
		}
	}
	return texts
}

// TestDiscordEscape reads discordEscape's output as Discord's markdown does and checks that no
// special character is left to act, and that dropping the escapes gives the value back.
func TestDiscordEscape(t *testing.T) {
	for _, v := range append(hostileValues, "12. twelve", "  3. indented", "v1.2 stays", "ends in \\", "") {
		got := discordEscape(v)
		var unescaped strings.Builder
		rs := []rune(got)
		for i := 0; i < len(rs); i++ {
			r := rs[i]
			// Discord's markdown takes a backslash before anything but a letter, a digit or a
			// space as an escape.
			if r == '\\' && i+1 < len(rs) && !unicode.IsLetter(rs[i+1]) && !unicode.IsDigit(rs[i+1]) && !unicode.IsSpace(rs[i+1]) {
				i++
				r = rs[i]
			} else if strings.ContainsRune(discordSpecial, r) || r == '.' && listNumber(unescaped.String()) {
				t.Errorf("discordEscape(%q) = %q leaves %q at %d to act", v, got, r, i)
			}
			unescaped.WriteRune(r)
		}
		if unescaped.String() != v {
			t.Errorf("discordEscape(%q) = %q reads as %q", v, got, unescaped.String())
		}
	}
}

// listNumber reports whether the last line of s is a number after spaces, so that a dot after it
// would start a numbered list.
func listNumber(s string) bool {
	line := strings.TrimLeft(s[strings.LastIndexAny(s, "\n\r")+1:], " ")
	return line != "" && strings.Trim(line, "0123456789") == ""
}

// TestDiscordClip cuts escaped text at every length and checks that no escape loses what it
// escapes: the text before the "…" never ends in a lone backslash.
func TestDiscordClip(t *testing.T) {
	escaped := discordEscape(strings.Repeat("*a\\", 20))
	for n := len("…"); n < len(escaped)+2; n++ {
		got := discordClip(escaped, n)
		body := strings.TrimSuffix(got, "…")
		if len(got) > n || (len(body)-len(strings.TrimRight(body, "\\")))%2 == 1 {
			t.Errorf("discordClip(%q, %d) = %q", escaped, n, got)
		}
	}
}
