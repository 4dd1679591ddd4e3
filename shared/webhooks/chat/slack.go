package chat

import (
	"strings"
)

// Slack's incoming webhook takes {"text", "blocks"}: text is the notification's and the fallback's
// text, blocks the message as shown (Block Kit). Text in mrkdwn escapes &, < and >.

type slackMessage struct {
	Text   string       `json:"text"`
	Blocks []slackBlock `json:"blocks"`
}

type slackBlock struct {
	Type     string      `json:"type"`
	Text     *slackText  `json:"text,omitempty"`
	Fields   []slackText `json:"fields,omitempty"`
	Elements []slackText `json:"elements,omitempty"`
}

type slackText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

var slackEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// Slack renders m as a Slack incoming-webhook message.
func Slack(m Message) ([]byte, error) {
	esc := slackEscaper.Replace
	title := esc(m.Title())
	head := "*" + title + "*"
	if m.Link != "" {
		head = "*<" + esc(m.Link) + "|" + title + ">*"
	}
	var fields []slackText
	field := func(name, value string) {
		if value != "" {
			fields = append(fields, slackText{Type: "mrkdwn", Text: "*" + name + "*\n" + esc(value)})
		}
	}
	field("Status", string(m.Status))
	field("Target", m.Target())
	field("Source", m.Source())
	field("Duration", m.Took())
	blocks := []slackBlock{{Type: "section", Text: &slackText{Type: "mrkdwn", Text: head}}}
	if len(fields) > 0 {
		blocks = append(blocks, slackBlock{Type: "section", Fields: fields})
	}
	if m.Reason != "" {
		blocks = append(blocks, slackBlock{Type: "section", Text: &slackText{Type: "mrkdwn", Text: "*Reason*\n" + esc(m.Reason)}})
	}
	if m.Link != "" {
		blocks = append(blocks, slackBlock{Type: "context", Elements: []slackText{{Type: "mrkdwn", Text: "<" + esc(m.Link) + "|Open the build in kiln>"}}})
	}
	text := title
	if m.Reason != "" {
		text += ": " + esc(m.Reason)
	}
	return marshal(slackMessage{Text: text, Blocks: blocks})
}
