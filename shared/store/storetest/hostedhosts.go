package storetest

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

func testHostedHosts(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("SeenOnceThenClaimedOnce", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		id := "i-" + kiln.NewID()
		_, err := s.GetHostedHost(ctx, id)
		wantCode(t, err, kiln.ENotFound, "GetHostedHost before any record")

		seen := now()
		h, err := s.SeeHostedHost(ctx, id, seen)
		wantOK(t, err, "SeeHostedHost")
		want := &kiln.HostedHost{ID: id, SeenAt: seen}
		if !reflect.DeepEqual(want, h) {
			t.Fatalf("first SeeHostedHost = %+v, want %+v", h, want)
		}
		// A later sighting keeps the first one's time.
		h, err = s.SeeHostedHost(ctx, id, seen.Add(time.Hour))
		wantOK(t, err, "SeeHostedHost again")
		if !reflect.DeepEqual(want, h) {
			t.Fatalf("second SeeHostedHost = %+v, want %+v", h, want)
		}

		claimed := seen.Add(time.Minute)
		wantOK(t, s.ClaimHostedHost(ctx, &kiln.HostedHost{ID: id, SeenAt: claimed, ClaimedAt: &claimed, OrganizationID: "org1", BuildID: "b1"}), "ClaimHostedHost")
		// A second claim is conflict and changes nothing, nor does a retirement.
		later := claimed.Add(time.Minute)
		wantCode(t, s.ClaimHostedHost(ctx, &kiln.HostedHost{ID: id, SeenAt: later, ClaimedAt: &later, OrganizationID: "org2", BuildID: "b2"}), kiln.EConflict, "ClaimHostedHost again")
		wantCode(t, s.ClaimHostedHost(ctx, &kiln.HostedHost{ID: id, SeenAt: later, ClaimedAt: &later}), kiln.EConflict, "retire a claimed host")
		want = &kiln.HostedHost{ID: id, SeenAt: seen, ClaimedAt: &claimed, OrganizationID: "org1", BuildID: "b1"}
		for what, get := range map[string]func() (*kiln.HostedHost, error){
			"GetHostedHost": func() (*kiln.HostedHost, error) { return s.GetHostedHost(ctx, id) },
			"SeeHostedHost": func() (*kiln.HostedHost, error) { return s.SeeHostedHost(ctx, id, later) },
		} {
			got, err := get()
			wantOK(t, err, what)
			if !reflect.DeepEqual(want, got) {
				t.Fatalf("%s after the claims = %+v, want %+v", what, got, want)
			}
		}
	})

	t.Run("ClaimWithoutSightingAndRetire", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		at := now()
		a, b := "i-"+kiln.NewID(), "i-"+kiln.NewID()
		wantOK(t, s.ClaimHostedHost(ctx, &kiln.HostedHost{ID: a, SeenAt: at, ClaimedAt: &at, OrganizationID: "org1", BuildID: "b1"}), "claim unseen")
		got, err := s.GetHostedHost(ctx, a)
		wantOK(t, err, "GetHostedHost")
		if want := (&kiln.HostedHost{ID: a, SeenAt: at, ClaimedAt: &at, OrganizationID: "org1", BuildID: "b1"}); !reflect.DeepEqual(want, got) {
			t.Fatalf("claimed unseen host = %+v, want %+v", got, want)
		}
		// Retiring (a claim of no build) closes the host to claims.
		_, err = s.SeeHostedHost(ctx, b, at)
		wantOK(t, err, "SeeHostedHost")
		wantOK(t, s.ClaimHostedHost(ctx, &kiln.HostedHost{ID: b, SeenAt: at, ClaimedAt: &at}), "retire")
		wantCode(t, s.ClaimHostedHost(ctx, &kiln.HostedHost{ID: b, SeenAt: at, ClaimedAt: &at, OrganizationID: "org1", BuildID: "b2"}), kiln.EConflict, "claim a retired host")
		got, err = s.GetHostedHost(ctx, b)
		wantOK(t, err, "GetHostedHost")
		if !got.Claimed() || got.BuildID != "" {
			t.Fatalf("retired host = %+v, want claimed with no build", got)
		}
		wantCode(t, s.ClaimHostedHost(ctx, &kiln.HostedHost{ID: b}), kiln.EBadRequest, "claim without a time")
	})

	t.Run("ConcurrentClaimsHaveOneWinner", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		id, at := "i-"+kiln.NewID(), now()
		errs := race(20, func(i int) error {
			return s.ClaimHostedHost(ctx, &kiln.HostedHost{ID: id, SeenAt: at, ClaimedAt: &at, OrganizationID: "org1", BuildID: fmt.Sprint("b", i)})
		})
		wantOneWinner(t, errs, kiln.EConflict)
	})
}
