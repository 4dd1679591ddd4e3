package dynamostore

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/guregu/dynamo/v2"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// userItem is the profile of a user who signs in with GitHub: PK "USER#<userId>", SK "PROFILE".
type userItem struct {
	itemKeys
	UserID    string `dynamo:"userId"`
	GitHubID  int64  `dynamo:"githubId"`
	Email     string `dynamo:"email"`
	Name      string `dynamo:"name"`
	Login     string `dynamo:"login"`
	CreatedAt int64  `dynamo:"createdAt"`
}

// githubIDItem finds a user by their GitHub user id: PK = SK = "GHUSER#<githubId>". It is written
// with the profile, in one transaction, and never changes.
type githubIDItem struct {
	itemKeys
	UserID string `dynamo:"userId"`
}

func (it *userItem) user() *kiln.GitHubUser {
	return &kiln.GitHubUser{
		User:     kiln.User{ID: it.UserID, Email: it.Email, Name: it.Name, CreatedAt: fromMS(it.CreatedAt)},
		GitHubID: it.GitHubID, Login: it.Login,
	}
}

// signInAttempts bounds how often a first sign-in that lost to a concurrent one reads again.
const signInAttempts = 3

// SignInGitHubUser reads the GitHub id's item: when there is one, it updates that user's profile;
// otherwise it writes the profile and the GitHub id's item in one transaction, each only if
// absent. A concurrent first sign-in that wrote the GitHub id's item first wins, and this one then
// reads it and updates the winner's profile.
func (s *Store) SignInGitHubUser(ctx context.Context, u *kiln.GitHubUser) (*kiln.GitHubUser, error) {
	const op = "sign in GitHub user"
	key := githubIDKey(u.GitHubID)
	for attempt := 1; ; attempt++ {
		var found githubIDItem
		err := s.readItem(ctx, key, key, &found)
		if err == nil {
			return s.updateGitHubUser(ctx, found.UserID, u)
		}
		if !isNotFound(err) {
			return nil, wrap(op, err)
		}
		it := &userItem{
			itemKeys: itemKeys{PK: userPK(u.ID), SK: userProfileSK, Type: typeUser},
			UserID:   u.ID, GitHubID: u.GitHubID, Email: u.Email, Name: u.Name, Login: u.Login,
			CreatedAt: toMS(u.CreatedAt),
		}
		err = s.runTx(ctx, func(tx *dynamo.WriteTx) {
			tx.Put(s.table.Put(it).If(notExists, attrPK))
			tx.Put(s.table.Put(&githubIDItem{itemKeys: hashItemKeys(key, typeGitHubID), UserID: u.ID}).If(notExists, attrPK))
		})
		at := txFailedAt(err)
		switch {
		case err == nil:
			return it.user(), nil
		case at == nil:
			return nil, wrap(op, err)
		case !slices.Contains(at, 1):
			return nil, kiln.Errorf(kiln.EConflict, "the user id is already taken")
		case attempt == signInAttempts:
			return nil, wrap(op, fmt.Errorf("GitHub user %d: %w", u.GitHubID, err))
		}
		// Another sign-in of the same GitHub user wrote it first: read it again.
	}
}

// updateGitHubUser sets the profile's email, name and login and answers it as it now is.
func (s *Store) updateGitHubUser(ctx context.Context, userID string, u *kiln.GitHubUser) (*kiln.GitHubUser, error) {
	var it userItem
	err := s.table.Update(attrPK, userPK(userID)).Range(attrSK, userProfileSK).
		Set("email", u.Email).Set("name", u.Name).Set("login", u.Login).
		If(exists, attrPK).Value(ctx, &it)
	if isCondFailed(err) {
		// The GitHub id's item is written with the profile and neither is ever deleted.
		return nil, wrap("sign in GitHub user", fmt.Errorf("GitHub user %d names user %s, who has no profile", u.GitHubID, userID))
	}
	if err != nil {
		return nil, wrap("sign in GitHub user", err)
	}
	return it.user(), nil
}

func (s *Store) GetGitHubUser(ctx context.Context, userID string) (*kiln.GitHubUser, error) {
	return get(ctx, s, "get GitHub user", "user", userPK(userID), userProfileSK, (*userItem).user)
}

// ListMemberships queries GSI1's partition "USER#<userId>" for the member items of every
// organization (in organization id order), then puts them oldest first.
func (s *Store) ListMemberships(ctx context.Context, userID string) ([]*kiln.Member, error) {
	q := listQuery{index: indexGSI1, pkAttr: attrGSI1PK, skAttr: attrGSI1SK, pk: userPK(userID), skPrefix: prefixMember, forward: true}
	ms, err := listAll(ctx, s, "list memberships", q, 0, (*memberItem).member)
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(ms, func(a, b *kiln.Member) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.OrganizationID, b.OrganizationID))
	})
	return ms, nil
}
