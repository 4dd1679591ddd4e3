package api

// TriggerRequest is the body of POST /projects/:id/build-settings/:settingId/trigger: overrides
// of the setting's branch and commit (GitHub) or changelist (Perforce); an absent field keeps the
// setting's. Clean asks for a clean build: no build cache is used, and the build replaces it.
type TriggerRequest struct {
	Branch     *string `json:"branch,omitempty"`
	Commit     *string `json:"commit,omitempty"`
	Changelist *string `json:"changelist,omitempty"`
	Clean      *bool   `json:"clean,omitempty"`
}

// TriggerAccepted is the answer to a trigger (202). Its fields are in alphabetical order, the
// order the API has always answered them in.
type TriggerAccepted struct {
	BuildID        string `json:"buildId"`
	BuildSettingID string `json:"buildSettingId"`
	Number         *int64 `json:"number"`
	ProjectID      string `json:"projectId"`
	Status         string `json:"status"`
}
