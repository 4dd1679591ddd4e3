package httpapi

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// membersOf answers GetMember from a map of one organization's members.
type membersOf struct {
	organizationStore
	org     string
	members map[string]kiln.User
}

func (m membersOf) GetMember(_ context.Context, orgID, userID string) (*kiln.Member, error) {
	u, ok := m.members[userID]
	if !ok || orgID != m.org {
		return nil, kiln.NotFound("member")
	}
	return &kiln.Member{OrganizationID: orgID, User: u, Role: kiln.RoleMember}, nil
}

// TestBuildTrigger: triggeredBy and rerunOf read as a trigger object, with the user's name (or
// email) when they are a member of the build's organization, and null otherwise.
func TestBuildTrigger(t *testing.T) {
	s := &Server{}
	s.orgs = membersOf{org: "o1", members: map[string]kiln.User{
		"u1": {ID: "u1", Name: "Ada Lovelace", Email: "ada@studio.example"},
		"u2": {ID: "u2", Email: "grace@studio.example"},
	}}
	tests := []struct {
		name        string
		org         string
		triggeredBy string
		rerunOf     string
		want        string
	}{
		{"a member", "o1", "user:u1", "", `{"kind":"user","userId":"u1","name":"Ada Lovelace","commit":null,"rerunOf":null}`},
		{"a member without a name", "o1", "user:u2", "", `{"kind":"user","userId":"u2","name":"grace@studio.example","commit":null,"rerunOf":null}`},
		{"a former member", "o1", "user:u9", "", `{"kind":"user","userId":"u9","name":null,"commit":null,"rerunOf":null}`},
		{"a member of another organization", "o2", "user:u1", "", `{"kind":"user","userId":"u1","name":null,"commit":null,"rerunOf":null}`},
		{"a push", "o1", "push:0123abc", "", `{"kind":"push","userId":null,"name":null,"commit":"0123abc","rerunOf":null}`},
		{"a Perforce submit", "o1", "push:4711", "", `{"kind":"push","userId":null,"name":null,"commit":"4711","rerunOf":null}`},
		{"the schedule", "o1", "cron", "", `{"kind":"schedule","userId":null,"name":null,"commit":null,"rerunOf":null}`},
		{"a re-run", "o1", "user:u1", "b0", `{"kind":"rerun","userId":"u1","name":"Ada Lovelace","commit":null,"rerunOf":"b0"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := renderBuild(&kiln.Build{ID: "b1", OrganizationID: tt.org, TriggeredBy: tt.triggeredBy, RerunOf: tt.rerunOf})
			if err := s.nameTriggers(context.Background(), tt.org, &body); err != nil {
				t.Fatal(err)
			}
			got, _ := json.Marshal(body.Trigger)
			if string(got) != tt.want {
				t.Errorf("trigger = %s\nwant      %s", got, tt.want)
			}
			if body.TriggeredBy != tt.triggeredBy {
				t.Errorf("triggeredBy = %q, want it unchanged", body.TriggeredBy)
			}
		})
	}
}
