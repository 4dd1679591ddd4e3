package chat

import "strings"

// Tenants name projects and branches and write the failure reasons a message quotes: each such
// value goes through its service's escaper, so that it reads as the text it is and never as
// formatting, a link, a mention or a quote.

// discordSpecial are the characters Discord's markdown gives a meaning: emphasis, strikethrough,
// code, spoilers, quotes, headings, subtext, lists, masked links, mentions and timestamps
// ("<@123>", "<t:0:R>"), emoji (":name:") and, through the colon of "https://", links and their
// embeds.
const discordSpecial = "\\*_~`|>#-[]()<:@"

// discordEscape escapes s for Discord's markdown: a backslash before each special character, and
// before the dot of a numbered list ("1. ") at a line's start.
func discordEscape(s string) string {
	var b strings.Builder
	b.Grow(len(s) + len(s)/4)
	digits := 0 // digits since the line's start (after its indentation); -1 once anything else came
	for _, r := range s {
		if strings.ContainsRune(discordSpecial, r) || r == '.' && digits > 0 {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
		switch {
		case r == '\n' || r == '\r':
			digits = 0
		case r >= '0' && r <= '9' && digits >= 0:
			digits++
		case r == ' ' && digits == 0:
		default:
			digits = -1
		}
	}
	return b.String()
}

// discordClip is clip for escaped text: it never leaves a lone backslash before the "…".
func discordClip(s string, n int) string {
	c := clip(s, n)
	if c == s {
		return c
	}
	body := strings.TrimSuffix(c, "…")
	if trailing := len(body) - len(strings.TrimRight(body, "\\")); trailing%2 == 1 {
		body = body[:len(body)-1]
	}
	return body + "…"
}

// zwsp is a zero-width space. Slack's mrkdwn has no escape character: a zero-width space on
// either side of "*", "_", "~" or "`" keeps it from opening or closing formatting, and one
// before "&gt;" keeps a line from being a quote.
const zwsp = "\u200b"

// slackEscaper escapes what Slack's mrkdwn asks (&, < and >, so "<!channel>" and
// "<https://evil|click>" read as text) and neutralises formatting characters.
var slackEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", zwsp+"&gt;",
	"*", zwsp+"*"+zwsp, "_", zwsp+"_"+zwsp, "~", zwsp+"~"+zwsp, "`", zwsp+"`"+zwsp)

// slackEscape escapes s for Slack's mrkdwn.
func slackEscape(s string) string { return slackEscaper.Replace(s) }

// slackLinkEscaper escapes a URL kiln made for the "<url|text>" of a Slack link: the
// characters Slack's mrkdwn asks to escape, and "|", which would end the URL.
var slackLinkEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "|", "%7C")

// slackLink is a Slack link to url (which kiln made) reading text (escaped already).
func slackLink(url, text string) string {
	return "<" + slackLinkEscaper.Replace(url) + "|" + text + ">"
}
