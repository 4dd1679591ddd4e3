package storetest

import (
	"errors"
	"testing"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// testNotFoundNames checks that reading what is not there is not_found naming the kind of thing
// asked for: the message reaches API clients as it is.
func testNotFoundNames(t *testing.T, open func(t *testing.T) store.Store) {
	s, ctx := open(t), t.Context()
	f := createOrganization(t, s)
	org, unknown := f.org.ID, kiln.NewID()
	cases := []struct {
		name, kind string
		get        func() error
	}{
		{"GetOrganization", "organization", func() error { _, err := s.GetOrganization(ctx, unknown); return err }},
		{"GetOrganizationByInstallation", "organization", func() error { _, err := s.GetOrganizationByInstallation(ctx, unknown); return err }},
		{"GetMember", "member", func() error { _, err := s.GetMember(ctx, org, unknown); return err }},
		{"GetTokenByHash", "token", func() error { _, err := s.GetTokenByHash(ctx, unknown); return err }},
		{"GetTriggerTokenByHash", "trigger token", func() error { _, err := s.GetTriggerTokenByHash(ctx, unknown); return err }},
		{"GetAgentByHash", "agent", func() error { _, err := s.GetAgentByHash(ctx, unknown); return err }},
		{"GetAgent", "agent", func() error { _, err := s.GetAgent(ctx, org, unknown); return err }},
		{"GetProject", "project", func() error { _, err := s.GetProject(ctx, org, unknown); return err }},
		{"GetBuildSetting", "build setting", func() error { _, err := s.GetBuildSetting(ctx, org, unknown, unknown); return err }},
		{"GetArtifact", "artifact", func() error { _, err := s.GetArtifact(ctx, org, unknown); return err }},
		{"GetBuild", "build", func() error { _, err := s.GetBuild(ctx, org, unknown); return err }},
		{"GetHostedHost", "hosted host", func() error { _, err := s.GetHostedHost(ctx, unknown); return err }},
		{"GetWebhook", "webhook", func() error { _, err := s.GetWebhook(ctx, org, unknown); return err }},
		{"GetWebhookDelivery", "webhook delivery", func() error { _, err := s.GetWebhookDelivery(ctx, org, unknown, unknown); return err }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.get()
			wantCode(t, err, kiln.ENotFound, c.name)
			var e *kiln.Error
			if !errors.As(err, &e) || e.Message != c.kind+" not found" {
				t.Fatalf("%s: got error %v, want the message %q", c.name, err, c.kind+" not found")
			}
		})
	}
}
