package httpapi

import (
	"context"

	"github.com/kilnbuild/kiln/shared/api"
	"github.com/kilnbuild/kiln/shared/builds"
	"github.com/kilnbuild/kiln/shared/kiln"
	"github.com/kilnbuild/kiln/shared/store"
)

func renderStages(stages []kiln.BuildStage) []api.BuildStage {
	out := make([]api.BuildStage, len(stages))
	for i, s := range stages {
		out[i] = api.BuildStage{Name: s.Name, StartedAt: timestamp(s.StartedAt), EndedAt: optionalTimestamp(s.EndedAt)}
	}
	return out
}

func renderProgress(e *builds.Estimate) *api.Progress {
	if e == nil {
		return nil
	}
	p := &api.Progress{Stage: nullable(e.Stage), Percent: e.Percent, ElapsedMs: e.Elapsed.Milliseconds(), Overrun: e.Overrun, BasedOn: e.BasedOn}
	if !e.Overrun {
		ms := e.Remaining.Milliseconds()
		p.RemainingMs = &ms
	}
	return p
}

// addProgress sets the progress of the running builds among bodies (bs[i] is rendered in
// bodies[i]), reading the history of each of their settings once.
func (s *Server) addProgress(ctx context.Context, orgID string, bs []*kiln.Build, bodies []*api.Build) error {
	history := map[string][]*kiln.Build{}
	now := s.now()
	for i, b := range bs {
		if b.Status != kiln.StatusRunning || b.StartedAt == nil || b.BuildSettingID == "" {
			continue
		}
		h, ok := history[b.BuildSettingID]
		if !ok {
			var err error
			// The build itself is never among them: it is running, not complete.
			h, _, err = s.history.ListBuilds(ctx, orgID, store.BuildFilter{BuildSettingID: b.BuildSettingID, Status: kiln.StatusComplete},
				store.Page{Limit: builds.EstimateHistory})
			if err != nil {
				return err
			}
			history[b.BuildSettingID] = h
		}
		bodies[i].Progress = renderProgress(builds.EstimateProgress(b, h, now))
	}
	return nil
}
