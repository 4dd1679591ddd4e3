package artifacts

// UploadedPart is one part of a multipart upload a remote build host sent: its number (1 to
// 10,000) and the ETag the storage answered its PUT with.
type UploadedPart struct {
	Number int32  `json:"number"`
	ETag   string `json:"etag"`
}
