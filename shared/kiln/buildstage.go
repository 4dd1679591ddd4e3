package kiln

import (
	"slices"
	"strings"
	"time"
)

// BuildStage is one stage a running build went through (sync, compile, cook, stage, package,
// upload): when it began, and when it ended (nil while it is the build's current stage).
type BuildStage struct {
	Name      string
	StartedAt time.Time
	EndedAt   *time.Time
}

// StageLinePrefix begins the log line with which a runner says its build entered a stage:
// "==> kiln: stage <name>".
const StageLinePrefix = "==> kiln: stage "

// MaxBuildStages bounds the stages a build records; a host that names more is not believed.
const MaxBuildStages = 32

// StageOfLine answers the stage a log line says the build entered, if it is a stage line with a
// valid name (1 to 32 lower-case letters, digits or '-').
func StageOfLine(message string) (string, bool) {
	name, ok := strings.CutPrefix(message, StageLinePrefix)
	if !ok || !validStageName(name) {
		return "", false
	}
	return name, true
}

func validStageName(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for _, c := range s {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return true
}

// CurrentStage is the stage a running build is in, "" before its first stage and once it ended.
func (b *Build) CurrentStage() string {
	if b.Status != StatusRunning || len(b.Stages) == 0 {
		return ""
	}
	last := b.Stages[len(b.Stages)-1]
	if last.EndedAt != nil {
		return ""
	}
	return last.Name
}

// EnterStage records that the running build entered stage name at at, ending the stage it was
// in. It reports whether anything changed: entering the current stage again (a log batch sent
// twice) changes nothing, nor does a stage past MaxBuildStages or of a build not running.
func (b *Build) EnterStage(name string, at time.Time) bool {
	if b.Status != StatusRunning || !validStageName(name) || b.CurrentStage() == name || len(b.Stages) >= MaxBuildStages {
		return false
	}
	at = at.UTC()
	b.endStage(at)
	b.Stages = append(slices.Clip(b.Stages), BuildStage{Name: name, StartedAt: at})
	return true
}

// endStage ends the open stage, if any, at at (never before it began). The stages are copied
// first: a copy of the build taken before (to tell what changed) keeps its own.
func (b *Build) endStage(at time.Time) {
	if len(b.Stages) == 0 || b.Stages[len(b.Stages)-1].EndedAt != nil {
		return
	}
	b.Stages = slices.Clone(b.Stages)
	last := &b.Stages[len(b.Stages)-1]
	at = at.UTC()
	if at.Before(last.StartedAt) {
		at = last.StartedAt
	}
	last.EndedAt = &at
}

// sameStages compares two builds' stages.
func sameStages(a, b []BuildStage) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || !a[i].StartedAt.Equal(b[i].StartedAt) || !sameTime(a[i].EndedAt, b[i].EndedAt) {
			return false
		}
	}
	return true
}
