package storetest

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

// race runs n calls of fn at once and returns their errors.
func race(n int, fn func(i int) error) []error {
	errs := make([]error, n)
	var start, done sync.WaitGroup
	start.Add(1)
	for i := range n {
		done.Go(func() {
			start.Wait()
			errs[i] = fn(i)
		})
	}
	start.Done()
	done.Wait()
	return errs
}

// wantOneWinner fails the test unless exactly one error is nil and all others carry code.
func wantOneWinner(t *testing.T, errs []error, code string) int {
	t.Helper()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Fatalf("calls %d and %d both succeeded", winner, i)
		case err == nil:
			winner = i
		case !kiln.IsCode(err, code):
			t.Fatalf("call %d: got error %v, want code %s", i, err, code)
		}
	}
	if winner < 0 {
		t.Fatalf("no call succeeded")
	}
	return winner
}

func testRaces(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("UpdateBuildFromSameStatus", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f, set := createOrganizationSetting(t, s)
		stored := createBuild(t, s, set, kiln.StatusPending)
		// Every racer holds the build as it was before any of them wrote, so the store's
		// condition alone decides the winner.
		builds := make([]*kiln.Build, 50)
		for i := range builds {
			b, err := s.GetBuild(ctx, f.org.ID, stored.ID)
			wantOK(t, err, "GetBuild")
			builds[i] = b
		}
		errs := race(50, func(i int) error {
			b := builds[i]
			if err := b.Transition(kiln.StatusRunning, now(), ""); err != nil {
				return fmt.Errorf("Transition: %w", err)
			}
			b.TriggeredBy = fmt.Sprintf("racer %d", i)
			return s.UpdateBuild(ctx, b, kiln.StatusPending, kiln.AllBuildFields)
		})
		winner := wantOneWinner(t, errs, kiln.EInvalidState)
		got, err := s.GetBuild(ctx, f.org.ID, stored.ID)
		wantOK(t, err, "GetBuild")
		wantEqual(t, "stored build", got, builds[winner])
		wantIDs(t, "running builds", listBuildIDs(t, s, f.org.ID, store.BuildFilter{Status: kiln.StatusRunning}, 10), []string{stored.ID})
		wantIDs(t, "pending builds", listBuildIDs(t, s, f.org.ID, store.BuildFilter{Status: kiln.StatusPending}, 10), nil)
	})

	t.Run("CreateBuildOnceWithSameKey", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f, set := createOrganizationSetting(t, s)
		const n = 20
		builds := newPendingBuilds(set, n)
		got := make([]*kiln.Build, n)
		fps := make([]string, n)
		created := make([]bool, n)
		errs := race(n, func(i int) error {
			var err error
			got[i], fps[i], created[i], err = s.CreateBuildOnce(ctx, builds[i], "same-key", fmt.Sprintf("fp-%d", i))
			return err
		})
		winner := -1
		for i, err := range errs {
			wantOK(t, err, fmt.Sprintf("CreateBuildOnce %d", i))
			if created[i] {
				if winner >= 0 {
					t.Fatalf("calls %d and %d both created", winner, i)
				}
				winner = i
			}
		}
		if winner < 0 {
			t.Fatal("no call created")
		}
		for i := range n {
			wantOnce(t, fmt.Sprintf("answer %d", i), got[i], fps[i], created[i], builds[winner], fmt.Sprintf("fp-%d", winner), i == winner)
		}
		wantIDs(t, "builds", listBuildIDs(t, s, f.org.ID, store.BuildFilter{}, 10), []string{builds[winner].ID})
	})

	t.Run("CreateMemberWithSameEmail", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		f := createOrganization(t, s)
		members := make([]*kiln.Member, 20)
		tokens := make([]*kiln.Token, 20)
		for i := range members {
			email := "racer@example.com"
			if i%2 == 1 {
				email = strings.ToUpper(email)
			}
			members[i] = newMember(f.org.ID, email, kiln.RoleMember)
			tokens[i] = newToken(f.org.ID, members[i].User.ID)
		}
		errs := race(20, func(i int) error { return s.CreateMember(ctx, members[i], tokens[i]) })
		winner := wantOneWinner(t, errs, kiln.EConflict)
		got := walk(t, 10, func(p store.Page) ([]*kiln.Member, string, error) {
			return s.ListMembers(ctx, f.org.ID, p)
		}, memberID, nil)
		wantIDs(t, "members", got, newestFirst([]string{f.owner.User.ID, members[winner].User.ID}))
		for i, tk := range tokens {
			_, err := s.GetTokenByHash(ctx, tk.Hash)
			if i == winner {
				wantOK(t, err, "GetTokenByHash of the winner's token")
			} else {
				wantCode(t, err, kiln.ENotFound, "GetTokenByHash of a loser's token")
			}
		}
	})

	t.Run("CreateOrganizationWithSameSlug", func(t *testing.T) {
		s, ctx := open(t), t.Context()
		fixtures := make([]fixture, 10)
		for i := range fixtures {
			fixtures[i] = newOrganization()
			fixtures[i].org.Slug = fixtures[0].org.Slug
		}
		errs := race(len(fixtures), func(i int) error {
			f := fixtures[i]
			return s.CreateOrganization(ctx, f.org, f.owner, f.token)
		})
		winner := wantOneWinner(t, errs, kiln.EConflict)
		for i, f := range fixtures {
			_, err := s.GetTokenByHash(ctx, f.token.Hash)
			if i == winner {
				wantOK(t, err, "GetTokenByHash of the winner's token")
			} else {
				wantCode(t, err, kiln.ENotFound, "GetTokenByHash of a loser's token")
			}
		}
	})
}
