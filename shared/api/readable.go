package api

// Ended reports whether a build status is terminal (complete, failed, superseded).
func Ended(status string) bool {
	return status == "complete" || status == "failed" || status == "superseded"
}

// Ended reports whether the build reached a status that never changes.
func (b *Build) Ended() bool { return Ended(b.Status) }

// String says how the build started in a few words: "warm (from <build>)" or "cold
// (<reason>)"; "-" for nil (not known yet).
func (c *CacheUse) String() string {
	switch {
	case c == nil:
		return "-"
	case c.FromBuildID != nil:
		return c.State + " (from " + *c.FromBuildID + ")"
	case c.Reason != nil:
		return c.State + " (" + *c.Reason + ")"
	}
	return c.State
}

// String says who or what triggered the build in a few words: "Ada Lovelace", "push
// abc1234def56", "schedule", "re-run of <build> by Ada Lovelace"; "-" when unknown.
func (t BuildTrigger) String() string {
	who := "a former member"
	if t.Name != nil {
		who = *t.Name
	}
	switch t.Kind {
	case "":
		return "-"
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

// Ref is the branch (GitHub) or stream (Perforce) the setting builds.
func (s BuildSetting) Ref() string {
	if s.StreamPath != nil {
		return *s.StreamPath
	}
	return deref(s.Branch)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
