package meter

import (
	"encoding/json"
	"net/http"

	"github.com/kilnbuild/kiln/shared/awscost"
)

// HostPrincipal is the name build host time is counted under (CodeBuild builds: apart from the
// control plane's cost).
const HostPrincipal = "hosts"

// CodeBuild counts CodeBuild's API calls (free per call) and, from BatchGetBuilds' answers, each
// ended build's host time once (its endTime − startTime), under HostPrincipal.
func (m *Meter) CodeBuild(who Who, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := readBody(r)
		op := operation(r, body)
		m.Add(who(r), "codebuild:"+op, awscost.Usage{FreeRequests: 1})
		if op != "BatchGetBuilds" {
			next.ServeHTTP(w, r)
			return
		}
		rec := newRecorder()
		next.ServeHTTP(rec, r)
		var out struct {
			Builds []struct {
				ID        string  `json:"id"`
				StartTime float64 `json:"startTime"`
				EndTime   float64 `json:"endTime"`
			} `json:"builds"`
		}
		if rec.status == http.StatusOK && json.Unmarshal(rec.body.Bytes(), &out) == nil {
			for _, b := range out.Builds {
				m.hostTime(b.ID, b.StartTime, b.EndTime)
			}
		}
		rec.sendTo(w, rec.body.Bytes())
	})
}

func (m *Meter) hostTime(id string, start, end float64) {
	if id == "" || end <= 0 || end < start {
		return
	}
	m.mu.Lock()
	seen := m.hostBuilds[id]
	m.hostBuilds[id] = true
	m.mu.Unlock()
	if !seen {
		m.Add(HostPrincipal, "codebuild:build", awscost.Usage{HostSeconds: end - start})
	}
}
