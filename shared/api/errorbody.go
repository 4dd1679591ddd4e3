package api

// ErrorBody is the envelope of every failed request (schema Error). Code is the stable error
// code, Message a sentence for people; Fields says what is wrong with each field of a request
// that is not valid, Candidates the .uproject files found for multiple_uprojects.
type ErrorBody struct {
	Code       string            `json:"error"`
	Message    string            `json:"message"`
	RequestID  string            `json:"requestId"`
	Fields     map[string]string `json:"fields,omitempty"`
	Candidates []string          `json:"candidates,omitempty"`
}
