package api

// LogLine is a line of a build's log in its detail.
type LogLine struct {
	Timestamp string `json:"timestamp"`
	Level     string `json:"level"`
	Message   string `json:"message"`
}

// NumberedLogLine is a line of a log page, with its number in the build's log (from 1).
type NumberedLogLine struct {
	Seq int64 `json:"seq"`
	LogLine
}

// LogPage is one page of GET /builds/:id/logs?format=json. NextCursor is null only once the
// build has ended and its last line was returned.
type LogPage struct {
	Items       []NumberedLogLine `json:"items"`
	NextCursor  *string           `json:"nextCursor"`
	BuildStatus string            `json:"buildStatus"`
}
