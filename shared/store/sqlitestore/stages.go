package sqlitestore

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// stageJSON is one build stage as the stages column keeps it: times in Unix milliseconds.
type stageJSON struct {
	Name      string `json:"name"`
	StartedAt int64  `json:"startedAt"`
	EndedAt   *int64 `json:"endedAt,omitempty"`
}

// stagesText is the stages column of a build's stages: ” for none.
func stagesText(stages []kiln.BuildStage) string {
	if len(stages) == 0 {
		return ""
	}
	out := make([]stageJSON, len(stages))
	for i, s := range stages {
		out[i] = stageJSON{Name: s.Name, StartedAt: ms(s.StartedAt), EndedAt: optMSValue(s.EndedAt)}
	}
	b, _ := json.Marshal(out) // strings and numbers always marshal
	return string(b)
}

func optMSValue(t *time.Time) *int64 {
	if t == nil {
		return nil
	}
	v := ms(*t)
	return &v
}

// parseStages reads the stages column.
func parseStages(text string) ([]kiln.BuildStage, error) {
	if text == "" {
		return nil, nil
	}
	var in []stageJSON
	if err := json.Unmarshal([]byte(text), &in); err != nil {
		return nil, fmt.Errorf("stages: %w", err)
	}
	out := make([]kiln.BuildStage, len(in))
	for i, s := range in {
		out[i] = kiln.BuildStage{Name: s.Name, StartedAt: fromMS(s.StartedAt)}
		if s.EndedAt != nil {
			t := fromMS(*s.EndedAt)
			out[i].EndedAt = &t
		}
	}
	return out, nil
}
