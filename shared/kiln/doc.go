// Package kiln holds kiln's domain types and their rules: organizations and members with their
// roles, projects and their build settings, builds with their statuses and fields, artifacts,
// API tokens, trigger tokens and agents (one Credential shape), plans, org webhooks, and the
// errors every layer returns (NotFound, Invalid with FieldErrors, Conflict, ...). Each type
// validates itself. It imports no other kiln package, no AWS SDK and no net/http, so every
// layer — stores, services, the HTTP API, build hosts — can share it.
package kiln
