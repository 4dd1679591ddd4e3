package chat

// Slack's incoming webhook takes {"text", "blocks"}: text is the notification's and the fallback's
// text, blocks the message as shown (Block Kit). Tenants' values are escaped (slackEscape); the
// mrkdwn texts are verbatim, so that Slack links no bare URL or channel name, and links unfurl
// into no previews.

type slackMessage struct {
	Text        string       `json:"text"`
	Blocks      []slackBlock `json:"blocks"`
	UnfurlLinks bool         `json:"unfurl_links"`
	UnfurlMedia bool         `json:"unfurl_media"`
}

type slackBlock struct {
	Type     string      `json:"type"`
	Text     *slackText  `json:"text,omitempty"`
	Fields   []slackText `json:"fields,omitempty"`
	Elements []slackText `json:"elements,omitempty"`
}

type slackText struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	Verbatim bool   `json:"verbatim"`
}

// mrkdwn is a verbatim mrkdwn text object.
func mrkdwn(text string) slackText { return slackText{Type: "mrkdwn", Text: text, Verbatim: true} }

// Slack renders m as a Slack incoming-webhook message.
func Slack(m Message) ([]byte, error) {
	title := m.title(slackEscape)
	head := "*" + title + "*"
	if m.Link != "" {
		head = "*" + slackLink(m.Link, title) + "*"
	}
	var fields []slackText
	field := func(name, value string) {
		if value != "" {
			fields = append(fields, mrkdwn("*"+name+"*\n"+slackEscape(value)))
		}
	}
	field("Status", string(m.Status))
	field("Target", m.Target())
	field("Source", m.Source())
	field("Duration", m.Took())
	blocks := []slackBlock{{Type: "section", Text: new(mrkdwn(head))}}
	if len(fields) > 0 {
		blocks = append(blocks, slackBlock{Type: "section", Fields: fields})
	}
	if m.Reason != "" {
		blocks = append(blocks, slackBlock{Type: "section", Text: new(mrkdwn("*Reason*\n" + slackEscape(m.Reason)))})
	}
	if m.Link != "" {
		blocks = append(blocks, slackBlock{Type: "context", Elements: []slackText{mrkdwn(slackLink(m.Link, "Open the build in kiln"))}})
	}
	text := title
	if m.Reason != "" {
		text += ": " + slackEscape(m.Reason)
	}
	return marshal(slackMessage{Text: text, Blocks: blocks})
}
