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
)

// WebhookEvents lists every event.
var WebhookEvents = []WebhookEvent{EventBuildCreated, EventBuildRunning, EventBuildComplete, EventBuildFailed, EventBuildSuperseded, EventBuildSkipped}

func (e WebhookEvent) Valid() bool { return slices.Contains(WebhookEvents, e) }

// Webhook is an organization's subscription to build events, delivered as signed JSON POSTs.
type Webhook struct {
	ID             string
	OrganizationID string
	URL            string
	Events         []WebhookEvent
	Active         bool
	// Secret is the sealed signing secret; it is shown once, when the webhook is made.
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
