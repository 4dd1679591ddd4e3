package api

// LiveLogLine is the data of a build:log event of live build events (Socket.IO at /socket.io/):
// a line of the build's log, as a log page numbers it.
type LiveLogLine struct {
	BuildID string `json:"buildId"`
	NumberedLogLine
}

// LiveBuildStatus is the data of a build:status event: the build's status, at join and at every
// change.
type LiveBuildStatus struct {
	BuildID        string  `json:"buildId"`
	Status         string  `json:"status"`
	Number         *int64  `json:"number"`
	ProjectID      string  `json:"projectId"`
	BuildSettingID string  `json:"buildSettingId"`
	StartedAt      *string `json:"startedAt"`
	FinishedAt     *string `json:"finishedAt"`
	FailureReason  *string `json:"failureReason"`
}
