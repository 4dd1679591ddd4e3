package client

import (
	"context"
	"net/url"
)

// BuildTrigger says who or what triggered a build: kind user, push, schedule or rerun.
type BuildTrigger struct {
	Kind    string  `json:"kind"`
	UserID  *string `json:"userId"`
	Name    *string `json:"name"`
	Commit  *string `json:"commit"`
	RerunOf *string `json:"rerunOf"`
}

// String says it in a few words: "Ada Lovelace", "push abc1234def56", "schedule",
// "re-run of <build> by Ada Lovelace"; "-" when unknown.
func (t *BuildTrigger) String() string {
	if t == nil {
		return "-"
	}
	who := "a former member"
	if t.Name != nil {
		who = *t.Name
	}
	switch t.Kind {
	case "user":
		return who
	case "push":
		commit := deref(t.Commit)
		if len(commit) > 12 {
			commit = commit[:12]
		}
		return "push " + commit
	case "schedule":
		return "schedule"
	case "rerun":
		return "re-run of " + deref(t.RerunOf) + " by " + who
	}
	return t.Kind
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Rerun queues a new build of the same setting, branch and commit or changelist as build id,
// and answers it (pending, with rerunOf set).
func (c *Client) Rerun(ctx context.Context, id string) (*Build, error) {
	var b Build
	if err := c.do(ctx, "POST", "/builds/"+url.PathEscape(id)+"/rerun", nil, struct{}{}, &b); err != nil {
		return nil, err
	}
	return &b, nil
}
