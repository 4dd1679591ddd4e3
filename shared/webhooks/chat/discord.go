package chat

import (
	"github.com/kilnbuild/kiln/shared/kiln"
)

// Discord's webhook takes {"content", "embeds", "allowed_mentions"}: content is markdown (at
// most 2000 characters), an embed has a title, url, description, color and fields, markdown too.
// Tenants' values are escaped (discordEscape); allowed_mentions {"parse": []} keeps a branch or a
// reason that reads "@everyone" from pinging all the same.

type discordMessage struct {
	Content         string          `json:"content"`
	Embeds          []discordEmbed  `json:"embeds"`
	AllowedMentions discordMentions `json:"allowed_mentions"`
}

type discordEmbed struct {
	Title       string         `json:"title"`
	URL         string         `json:"url,omitempty"`
	Description string         `json:"description,omitempty"`
	Color       int            `json:"color"`
	Fields      []discordField `json:"fields,omitempty"`
}

type discordField struct {
	Name   string `json:"name"`
	Value  string `json:"value"`
	Inline bool   `json:"inline"`
}

type discordMentions struct {
	Parse []string `json:"parse"`
}

// Embed colors: red for a failure, green otherwise.
const (
	discordRed   = 0xd73a49
	discordGreen = 0x28a745
)

// Discord renders m as a Discord webhook message.
func Discord(m Message) ([]byte, error) {
	color := discordGreen
	if m.Status == kiln.StatusFailed {
		color = discordRed
	}
	title := m.title(discordEscape)
	e := discordEmbed{Title: discordClip(title, 256), URL: m.Link, Color: color,
		Description: discordClip(discordEscape(m.Reason), 1024)}
	field := func(name, value string) {
		if value != "" {
			e.Fields = append(e.Fields, discordField{Name: name, Inline: true,
				Value: discordClip(discordEscape(value), 1024)})
		}
	}
	field("Status", string(m.Status))
	field("Target", m.Target())
	field("Source", m.Source())
	field("Duration", m.Took())
	return marshal(discordMessage{Content: discordClip(title, 2000), Embeds: []discordEmbed{e},
		AllowedMentions: discordMentions{Parse: []string{}}})
}
