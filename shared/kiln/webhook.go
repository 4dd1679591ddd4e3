package kiln

import (
	"slices"
	"time"
)

// WebhookEvent names what an organization webhook can be told about.
type WebhookEvent string

const (
	EventBuildCreated    WebhookEvent = "build.created"
	EventBuildRunning    WebhookEvent = "build.running"
	EventBuildComplete   WebhookEvent = "build.complete"
	EventBuildFailed     WebhookEvent = "build.failed"
	EventBuildSuperseded WebhookEvent = "build.superseded"
	// EventBuildSkipped: a push or schedule started no build because the plan's build minutes
	// were used up.
	EventBuildSkipped WebhookEvent = "build.skipped"
	// EventBuildFixed: a build completed and the build of the same setting that finished before
	// it (complete or failed, in the order builds were triggered) had failed. It is sent in
	// addition to build.complete.
	EventBuildFixed WebhookEvent = "build.fixed"
)

// WebhookEvents lists every event.
var WebhookEvents = []WebhookEvent{EventBuildCreated, EventBuildRunning, EventBuildComplete, EventBuildFailed, EventBuildSuperseded, EventBuildSkipped, EventBuildFixed}

// ChatEvents are the events a chat webhook (Slack, Discord) can be told about.
var ChatEvents = []WebhookEvent{EventBuildFailed, EventBuildFixed, EventBuildComplete}

// WebhookFormat is the shape of a webhook's deliveries.
type WebhookFormat string

const (
	// FormatKiln: kiln's own signed JSON event (docs/api.md); "" reads as kiln.
	FormatKiln WebhookFormat = "kiln"
	// FormatSlack: a Slack incoming-webhook message (text and blocks).
	FormatSlack WebhookFormat = "slack"
	// FormatDiscord: a Discord webhook message (content and an embed, no mentions).
	FormatDiscord WebhookFormat = "discord"
)

// WebhookFormats lists every format.
var WebhookFormats = []WebhookFormat{FormatKiln, FormatSlack, FormatDiscord}

func (f WebhookFormat) Valid() bool { return slices.Contains(WebhookFormats, f) }

// Chat reports whether deliveries go to a chat service's incoming webhook, whose URL is the
// secret.
func (f WebhookFormat) Chat() bool { return f == FormatSlack || f == FormatDiscord }

func (e WebhookEvent) Valid() bool { return slices.Contains(WebhookEvents, e) }

// FormatOrKiln is the webhook's format, FormatKiln when unset.
func (h *Webhook) FormatOrKiln() WebhookFormat {
	if h.Format == "" {
		return FormatKiln
	}
	return h.Format
}

// Webhook is an organization's subscription to build events, delivered as signed JSON POSTs
// (format kiln) or as chat messages (format slack or discord).
type Webhook struct {
	ID             string
	OrganizationID string
	// Format is fixed when the webhook is made; "" is FormatKiln (webhooks made before formats).
	Format WebhookFormat
	// URL is where deliveries go; for a chat format, whose URL is itself the secret, only its
	// masked form (scheme, host and the last characters), the URL being sealed in Secret.
	URL    string
	Events []WebhookEvent
	Active bool
	// SignatureHeader is an extra header ("X-<Name>-Signature") a kiln webhook's deliveries carry
	// the X-Kiln-Signature value under too, for receivers written for another service; "" none.
	SignatureHeader string
	// Secret is sealed (SecretAD): the signing secret, shown once when the webhook is made; for a
	// chat format the incoming-webhook URL, never shown.
	Secret    []byte
	CreatedAt time.Time
	UpdatedAt time.Time
}

// DeliveryStatus is where a webhook delivery is.
type DeliveryStatus string

const (
	DeliveryPending   DeliveryStatus = "pending"
	DeliverySucceeded DeliveryStatus = "succeeded"
	DeliveryFailed    DeliveryStatus = "failed"
)

// WebhookDelivery is one event sent (or to be sent) to one webhook, kept for the delivery log and
// redelivery.
type WebhookDelivery struct {
	ID             string
	OrganizationID string
	WebhookID      string
	Event          WebhookEvent
	// Payload is the exact JSON body, signed when sent.
	Payload        []byte
	Status         DeliveryStatus
	Attempts       int
	ResponseStatus int
	Error          string
	// NextAttemptAt is when the next attempt is due while the delivery is pending (the zero
	// time: due now); while an attempt runs, the end of its lease.
	NextAttemptAt time.Time
	CreatedAt     time.Time
	UpdatedAt     time.Time
}
