package storetest

import (
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

func testOrganizations(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("CreateWritesOrganizationOwnerAndToken", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := newOrganization()
		f.org.DefaultProjectSettings = kiln.ProjectDefaults{Platform: kiln.PlatformLinux, NotifyOnComplete: ptr(false)}
		f.token.ExpiresAt = ptr(now().Add(24 * time.Hour))
		wantOK(t, s.CreateOrganization(ctx, f.org, f.owner, f.token), "CreateOrganization")

		org, err := s.GetOrganization(ctx, f.org.ID)
		wantOK(t, err, "GetOrganization")
		wantEqual(t, "organization", org, f.org)
		m, err := s.GetMember(ctx, f.org.ID, f.owner.User.ID)
		wantOK(t, err, "GetMember")
		wantEqual(t, "owner", m, f.owner)
		tk, err := s.GetTokenByHash(ctx, f.token.Hash)
		wantOK(t, err, "GetTokenByHash")
		wantEqual(t, "token", tk, f.token)
	})

	t.Run("DuplicateSlugIsConflictAndWritesNothing", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		first := createOrganization(t, s)
		second := newOrganization()
		second.org.Slug = first.org.Slug
		err := s.CreateOrganization(ctx, second.org, second.owner, second.token)
		wantCode(t, err, kiln.EConflict, "CreateOrganization with a taken slug")

		_, err = s.GetOrganization(ctx, second.org.ID)
		wantCode(t, err, kiln.ENotFound, "GetOrganization of the refused organization")
		_, err = s.GetMember(ctx, second.org.ID, second.owner.User.ID)
		wantCode(t, err, kiln.ENotFound, "GetMember of the refused owner")
		_, err = s.GetTokenByHash(ctx, second.token.Hash)
		wantCode(t, err, kiln.ENotFound, "GetTokenByHash of the refused token")
		org, err := s.GetOrganization(ctx, first.org.ID)
		wantOK(t, err, "GetOrganization of the first")
		wantEqual(t, "first organization", org, first.org)
	})

	t.Run("Update", func(t *testing.T) {
		cases := []struct {
			name     string
			defaults kiln.ProjectDefaults
		}{
			{"EmptyDefaults", kiln.ProjectDefaults{}},
			{"NotifyTrue", kiln.ProjectDefaults{
				Platform: kiln.PlatformWin64, BuildType: kiln.BuildTypeShipping, UEVersion: "5.3.2",
				Trigger: kiln.TriggerPush, NotifyOnComplete: ptr(true),
			}},
			{"NotifyFalse", kiln.ProjectDefaults{BuildType: kiln.BuildTypeServer, NotifyOnComplete: ptr(false)}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				s, ctx := open(t), t.Context()
				f := createOrganization(t, s)
				want := *f.org
				want.Name = "Renamed Studio"
				want.Plan = kiln.PlanEnterprise
				want.DefaultProjectSettings = c.defaults
				want.UpdatedAt = f.org.UpdatedAt.Add(time.Minute)

				update := want
				update.Slug = "another-slug-" + f.org.ID // ignored: the slug never changes
				wantOK(t, s.UpdateOrganization(ctx, &update), "UpdateOrganization")
				got, err := s.GetOrganization(ctx, f.org.ID)
				wantOK(t, err, "GetOrganization")
				wantEqual(t, "updated organization", got, &want)
			})
		}
	})

	t.Run("UpdateThenClearDefaults", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		f.org.DefaultProjectSettings.NotifyOnComplete = ptr(true)
		f.org.DefaultProjectSettings.UEVersion = "5.4"
		wantOK(t, s.UpdateOrganization(ctx, f.org), "UpdateOrganization setting defaults")
		f.org.DefaultProjectSettings = kiln.ProjectDefaults{}
		wantOK(t, s.UpdateOrganization(ctx, f.org), "UpdateOrganization clearing defaults")
		got, err := s.GetOrganization(ctx, f.org.ID)
		wantOK(t, err, "GetOrganization")
		wantEqual(t, "organization", got, f.org)
	})

	t.Run("UnknownIsNotFound", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		_, err := s.GetOrganization(ctx, kiln.NewID())
		wantCode(t, err, kiln.ENotFound, "GetOrganization of an unknown id")
		f := newOrganization()
		wantCode(t, s.UpdateOrganization(ctx, f.org), kiln.ENotFound, "UpdateOrganization of an unknown id")
		_, err = s.GetOrganization(ctx, f.org.ID)
		wantCode(t, err, kiln.ENotFound, "GetOrganization after a refused update")
	})
}
