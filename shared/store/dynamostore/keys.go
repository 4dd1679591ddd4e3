package dynamostore

import (
	"fmt"
	"strconv"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// Attribute names of the table's and the indexes' keys.
const (
	attrPK     = "PK"
	attrSK     = "SK"
	attrGSI1PK = "GSI1PK"
	attrGSI1SK = "GSI1SK"
	attrGSI2PK = "GSI2PK"
	attrGSI2SK = "GSI2SK"
	attrGSI3PK = "GSI3PK"
	attrGSI3SK = "GSI3SK"
	attrGSI4PK = "GSI4PK"
	attrGSI4SK = "GSI4SK"
)

// Index names.
const (
	// indexGSI1 holds builds by project ("ORG#o#PROJECT#p" / "BUILD#b"), artifacts by project
	// ("ORG#o#PROJECT#p#ARTIFACTS" / "ARTIFACT#b") and projects by source control
	// ("ORG#o#SOURCE#github" / "PROJECT#p"), and a user's memberships ("USER#u" / "MEMBER#o").
	indexGSI1 = "GSI1"
	// indexGSI2 holds builds by build setting ("ORG#o#SETTING#s" / "BUILD#b").
	indexGSI2 = "GSI2"
	// indexGSI3 holds builds by status ("ORG#o#STATUS#pending" / "BUILD#b").
	indexGSI3 = "GSI3"
	// indexGSI4 holds the scans across organizations, each in one partition: queued builds
	// ("QUEUE#pending" / "<buildId>"), complete builds awaiting delivery ("DEPLOY" / "<buildId>"),
	// scheduled build settings ("SCHEDULED" / "<org>#<setting>"), artifacts by age ("ARTIFACTS" / "<createdAt ms, 15 digits>#<org>#<buildId>")
	// and pending webhook deliveries ("WEBHOOKS#pending" / "<deliveryId>").
	indexGSI4 = "GSI4"
)

// Item types, stored in the attribute "type" so that a partition can be read by a person.
const (
	typeOrganization = "organization"
	typeSlug         = "slug"
	typeMember       = "member"
	typeEmail        = "email"
	typeToken        = "token"
	typeTokenHash    = "tokenhash"
	typeTrigger      = "triggertoken"
	typeTriggerHash  = "triggertokenhash"
	typeAgent        = "agent"
	typeAgentHash    = "agenthash"
	typeProject      = "project"
	typeBuildSetting = "buildsetting"
	typeBuild        = "build"
	typeInstallation = "installation"
	typeArtifact     = "artifact"
	typeIdempotency  = "idempotency"
	typeWebhook      = "webhook"
	typeDelivery     = "delivery"
	typeOnceKey      = "oncekey"
	typeUsage        = "usage"
	typeSkipKey      = "skipkey"
	typeHostedHost   = "hostedhost"
	typeAudit        = "audit"
	typeInvitation   = "invitation"
	typeInviteHash   = "invitationhash"
	typeInviteEmail  = "invitationemail"
	typeUser         = "user"
	typeGitHubID     = "githubid"
	typeSession      = "session"
	typeSessionHash  = "sessionhash"
)

// Sort key prefixes of the items in an organization's partition.
const (
	prefixMember   = "MEMBER#"
	prefixAudit    = "AUDIT#"
	prefixEmail    = "EMAIL#"
	prefixToken    = "TOKEN#"
	prefixTrigger  = "TRIGGERTOKEN#"
	prefixAgent    = "AGENT#"
	prefixProject  = "PROJECT#"
	prefixSetting  = "SETTING#"
	prefixBuild    = "BUILD#"
	prefixArtifact = "ARTIFACT#"
	prefixWebhook  = "WEBHOOK#"
	prefixDelivery = "DELIVERY#"
	prefixInvite   = "INVITATION#"
)

func orgPK(orgID string) string { return "ORG#" + orgID }

// orgSK is the sort key of the organization item itself.
const orgSK = "ORG"

func slugKey(slug string) string                   { return "SLUG#" + slug }
func memberSK(userID string) string                { return prefixMember + userID }
func emailSK(email string) string                  { return prefixEmail + kiln.NormalizeEmail(email) }
func tokenPrefix(userID string) string             { return prefixToken + userID + "#" }
func tokenSK(userID, tokenID string) string        { return tokenPrefix(userID) + tokenID }
func tokenHashKey(hash string) string              { return "TOKENHASH#" + hash }
func triggerTokenSK(id string) string              { return prefixTrigger + id }
func triggerTokenHashKey(hash string) string       { return "TRIGGERTOKENHASH#" + hash }
func agentSK(id string) string                     { return prefixAgent + id }
func agentHashKey(hash string) string              { return "AGENTHASH#" + hash }
func projectSK(projectID string) string            { return prefixProject + projectID }
func settingPrefix(projectID string) string        { return prefixSetting + projectID + "#" }
func settingSK(projectID, settingID string) string { return settingPrefix(projectID) + settingID }
func buildSK(buildID string) string                { return prefixBuild + buildID }
func artifactSK(buildID string) string             { return prefixArtifact + buildID }
func idempotencySK(key string) string              { return "IDEM#" + key }
func onceKeySK(key string) string                  { return "ONCE#" + key }
func usageSK(month string) string                  { return "USAGE#" + month }
func skipKeySK(key string) string                  { return "SKIPKEY#" + key }
func webhookSK(webhookID string) string            { return prefixWebhook + webhookID }
func deliveryPrefix(webhookID string) string       { return prefixDelivery + webhookID + "#" }
func deliverySK(webhookID, id string) string       { return deliveryPrefix(webhookID) + id }
func invitationSK(id string) string                { return prefixInvite + id }
func invitationHashKey(hash string) string         { return "INVITATIONHASH#" + hash }
func invitationEmailSK(email string) string        { return "INVITEEMAIL#" + kiln.NormalizeEmail(email) }

// A user who signs in with GitHub has a partition of their own: their profile and their console
// sessions. Their memberships stay in the organizations' partitions, listed through GSI1.
func userPK(userID string) string { return "USER#" + userID }

const (
	userProfileSK = "PROFILE"
	prefixSession = "SESSION#"
)

func sessionSK(id string) string        { return prefixSession + id }
func sessionHashKey(hash string) string { return "SESSIONHASH#" + hash }
func githubIDKey(githubID int64) string { return "GHUSER#" + strconv.FormatInt(githubID, 10) }
func membershipSK(orgID string) string  { return prefixMember + orgID }

// installationPK is the partition of the item that holds which organization a GitHub App
// installation is linked to (its sort key is installationSK).
func installationPK(installationID string) string { return "INSTALLATION#" + installationID }

const installationSK = "INSTALLATION"

// GSI partition keys.
func sourcePK(orgID string, sc kiln.SourceControl) string {
	return orgPK(orgID) + "#SOURCE#" + string(sc)
}
func projectBuildsPK(orgID, projectID string) string { return orgPK(orgID) + "#PROJECT#" + projectID }
func projectArtifactsPK(orgID, projectID string) string {
	return projectBuildsPK(orgID, projectID) + "#ARTIFACTS"
}
func settingBuildsPK(orgID, settingID string) string { return orgPK(orgID) + "#SETTING#" + settingID }
func statusBuildsPK(orgID string, s kiln.BuildStatus) string {
	return orgPK(orgID) + "#STATUS#" + string(s)
}

// GSI4 partition keys: one partition per scan across organizations (see indexGSI4).
func queuePK(s kiln.BuildStatus) string { return "QUEUE#" + string(s) }

const (
	deployPK    = "DEPLOY"
	scheduledPK = "SCHEDULED"
	artifactsPK = "ARTIFACTS"
	// pendingDeliveriesPK holds pending webhook deliveries ("WEBHOOKS#pending" / "<deliveryId>").
	pendingDeliveriesPK = "WEBHOOKS#" + string(kiln.DeliveryPending)
)

func scheduledSK(orgID, settingID string) string { return orgID + "#" + settingID }

// agePrefix writes a time as 15 zero-padded digits of unix milliseconds, so that sort keys
// starting with it order by time (up to the year 33658; times before 1970 are not expected).
func agePrefix(ms int64) string { return fmt.Sprintf("%015d", ms) }

func artifactAgeSK(createdAtMS int64, orgID, buildID string) string {
	return agePrefix(createdAtMS) + "#" + orgID + "#" + buildID
}

// itemKeys are the key attributes every item carries; the GSI attributes are set only on the items
// an index holds (sparse indexes), and are omitted when empty.
type itemKeys struct {
	PK     string `dynamo:"PK"`
	SK     string `dynamo:"SK"`
	GSI1PK string `dynamo:"GSI1PK,omitempty"`
	GSI1SK string `dynamo:"GSI1SK,omitempty"`
	GSI2PK string `dynamo:"GSI2PK,omitempty"`
	GSI2SK string `dynamo:"GSI2SK,omitempty"`
	GSI3PK string `dynamo:"GSI3PK,omitempty"`
	GSI3SK string `dynamo:"GSI3SK,omitempty"`
	GSI4PK string `dynamo:"GSI4PK,omitempty"`
	GSI4SK string `dynamo:"GSI4SK,omitempty"`
	Type   string `dynamo:"type"`
}

// Live build events (liveregistry.go): sockets in a fixed set of partitions, so that all of
// them are listed without a Scan; each organization's connected sockets and their count; and
// one partition per build's room.
const (
	typeLiveSocket    = "livesocket"
	typeLiveOrgSocket = "liveorgsocket"
	typeLiveCount     = "livecount"
	typeLiveMember    = "livemember"
	prefixLiveSocket  = "SOCKET#"
	liveCountSK       = "COUNT"
)

func liveSocketsPK(shard uint32) string       { return fmt.Sprintf("LIVESOCKETS#%02d", shard) }
func liveSocketSK(connID string) string       { return prefixLiveSocket + connID }
func liveOrgPK(orgID string) string           { return orgPK(orgID) + "#LIVE" }
func liveRoomPK(orgID, buildID string) string { return orgPK(orgID) + "#ROOM#" + buildID }
