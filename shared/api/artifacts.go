package api

// Artifact is a build's artifact (GET /projects/:id/artifacts).
type Artifact struct {
	BuildID        string `json:"buildId"`
	ProjectID      string `json:"projectId"`
	BuildSettingID string `json:"buildSettingId"`
	Platform       string `json:"platform"`
	BuildType      string `json:"buildType"`
	UEVersion      string `json:"ueVersion"`
	Branch         string `json:"branch"`
	Commit         string `json:"commit"`
	SizeBytes      int64  `json:"sizeBytes"`
	ChecksumMD5    string `json:"checksumMd5"`
	CreatedAt      string `json:"createdAt"`
}

// DownloadLink is the answer of GET /builds/:id/download: a signed URL of the artifact (it needs
// no Authorization) with the artifact's size and MD5, and FileName, the name to save it under (a
// plain file name, no directory).
type DownloadLink struct {
	URL         string `json:"url"`
	ExpiresAt   string `json:"expiresAt"`
	SizeBytes   int64  `json:"sizeBytes"`
	ChecksumMD5 string `json:"checksumMd5"`
	FileName    string `json:"fileName"`
}
