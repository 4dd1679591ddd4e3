package api

// Usage is the answer of GET /organizations/:id/usage: a month's use of the organization
// against its plan. An Allowed of null is unlimited.
type Usage struct {
	OrganizationID       string           `json:"organizationId"`
	Plan                 string           `json:"plan"`
	Month                string           `json:"month"`
	BuildMinutes         UsageMinutes     `json:"buildMinutes"`
	ConcurrentBuilds     UsageCount       `json:"concurrentBuilds"`
	Projects             UsageCount       `json:"projects"`
	ArtifactStorageBytes int64            `json:"artifactStorageBytes"`
	SkippedTriggers      map[string]int64 `json:"skippedTriggers"`
	// BuildCaches is what the organization's build caches hold now (null: the server keeps
	// none, or could not list them).
	BuildCaches *UsageCaches `json:"buildCaches"`
	// Allows says what the plan allows besides its numbers.
	Allows UsageAllows `json:"allows"`
}

// UsageAllows is whether the plan allows Perforce credentials and auto deploy.
type UsageAllows struct {
	Perforce   bool `json:"perforce"`
	AutoDeploy bool `json:"autoDeploy"`
}

// UsageMinutes is the build minutes used in the month, by platform, and what the plan allows.
type UsageMinutes struct {
	Used       int64            `json:"used"`
	Allowed    *int64           `json:"allowed"`
	ByPlatform map[string]int64 `json:"byPlatform"`
}

// UsageCount is a count now and what the plan allows (null: unlimited).
type UsageCount struct {
	Current int    `json:"current"`
	Allowed *int64 `json:"allowed"`
}

// UsageCaches is the bytes and count of an organization's build caches and their cap (MaxBytes
// null: no cap).
type UsageCaches struct {
	Bytes    int64  `json:"bytes"`
	Count    int    `json:"count"`
	MaxBytes *int64 `json:"maxBytes"`
}
