// Package api holds the JSON bodies of kiln's public HTTP API, written once: shared/httpapi
// renders them and shared/client decodes them, so a field added to one is in the other.
// docs/openapi.yaml documents the same bodies; a test of this package fails when a body's
// fields and its schema's properties differ.
//
// The package holds data only: no HTTP, no domain types, no rendering (httpapi turns domain
// values into these bodies). Field order is the order of the JSON the API answers.
package api

// TimeFormat is how the API writes times: RFC 3339 in UTC with milliseconds.
const TimeFormat = "2006-01-02T15:04:05.000Z"
