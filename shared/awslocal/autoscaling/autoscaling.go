// Package autoscaling stands in for an Auto Scaling group of kiln's hosted EC2 hosts, for
// kiln aws-local and tests: it answers DescribeAutoScalingInstances and
// TerminateInstanceInAutoScalingGroup in Auto Scaling's query protocol (form-encoded POST, XML
// answers), so kiln's code uses the real AWS SDK client. Instances are what the caller adds
// (Launch); a terminated one leaves the group and its OnTerminate runs.
package autoscaling

import (
	"encoding/xml"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// Group is one Auto Scaling group of instances.
type Group struct {
	Name string

	mu        sync.Mutex
	instances []*instance // in launch order
	kept      int         // terminations that asked to keep the desired capacity
}

type instance struct {
	id, state   string
	onTerminate func()
}

// Launch adds an instance in state (InService, Pending, Warmed:Stopped…); onTerminate (may be
// nil) runs once it is terminated through the API.
func (g *Group) Launch(id, state string, onTerminate func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.instances = append(g.instances, &instance{id: id, state: state, onTerminate: onTerminate})
}

// Instances lists the ids of the group's instances.
func (g *Group) Instances() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []string
	for _, in := range g.instances {
		out = append(out, in.id)
	}
	return out
}

// Replaced counts the terminations that kept the desired capacity (the group would launch a
// replacement).
func (g *Group) Replaced() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.kept
}

// pageSize is how many instances one DescribeAutoScalingInstances answer holds at most (AWS's
// default MaxRecords is 50; a small page makes callers page).
const pageSize = 2

const xmlns = "http://autoscaling.amazonaws.com/doc/2011-01-01/"

// ServeHTTP answers the two actions.
func (g *Group) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.ParseForm() != nil {
		writeError(w, http.StatusBadRequest, "InvalidAction", "a form-encoded POST is expected")
		return
	}
	switch r.PostForm.Get("Action") {
	case "DescribeAutoScalingInstances":
		g.describe(w, r)
	case "TerminateInstanceInAutoScalingGroup":
		g.terminate(w, r)
	default:
		writeError(w, http.StatusBadRequest, "InvalidAction", fmt.Sprintf("action %q is not supported here", r.PostForm.Get("Action")))
	}
}

type member struct {
	InstanceID           string `xml:"InstanceId"`
	AutoScalingGroupName string
	AvailabilityZone     string
	LifecycleState       string
	HealthStatus         string
	ProtectedFromScaleIn bool
}

func (g *Group) describe(w http.ResponseWriter, r *http.Request) {
	var ids []string
	for i := 1; ; i++ {
		id := r.PostForm.Get("InstanceIds.member." + strconv.Itoa(i))
		if id == "" {
			break
		}
		ids = append(ids, id)
	}
	start := 0
	if tok := r.PostForm.Get("NextToken"); tok != "" {
		n, err := strconv.Atoi(tok)
		if err != nil || n < 0 {
			writeError(w, http.StatusBadRequest, "InvalidNextToken", "the next token is not one this group issued")
			return
		}
		start = n
	}
	g.mu.Lock()
	var all []member
	for _, in := range g.instances {
		if len(ids) == 0 || slices.Contains(ids, in.id) {
			all = append(all, member{InstanceID: in.id, AutoScalingGroupName: g.Name, AvailabilityZone: "local-1a",
				LifecycleState: in.state, HealthStatus: "HEALTHY", ProtectedFromScaleIn: true})
		}
	}
	g.mu.Unlock()
	type result struct {
		Members   []member `xml:"AutoScalingInstances>member"`
		NextToken string   `xml:"NextToken,omitempty"`
	}
	var res result
	if start < len(all) {
		end := min(start+pageSize, len(all))
		res.Members = all[start:end]
		if end < len(all) {
			res.NextToken = strconv.Itoa(end)
		}
	}
	writeXML(w, struct {
		XMLName xml.Name `xml:"DescribeAutoScalingInstancesResponse"`
		Xmlns   string   `xml:"xmlns,attr"`
		Result  result   `xml:"DescribeAutoScalingInstancesResult"`
		ReqID   string   `xml:"ResponseMetadata>RequestId"`
	}{Xmlns: xmlns, Result: res, ReqID: kiln.NewID()})
}

func (g *Group) terminate(w http.ResponseWriter, r *http.Request) {
	id := r.PostForm.Get("InstanceId")
	if r.PostForm.Get("ShouldDecrementDesiredCapacity") == "" {
		writeError(w, http.StatusBadRequest, "ValidationError", "ShouldDecrementDesiredCapacity is required")
		return
	}
	g.mu.Lock()
	i := slices.IndexFunc(g.instances, func(in *instance) bool { return in.id == id })
	var gone *instance
	if i >= 0 {
		gone = g.instances[i]
		g.instances = slices.Delete(g.instances, i, i+1)
	}
	g.mu.Unlock()
	if gone == nil {
		writeError(w, http.StatusBadRequest, "ValidationError", "Instance Id not found - No managed instance found for instance ID: "+id)
		return
	}
	if r.PostForm.Get("ShouldDecrementDesiredCapacity") != "true" {
		g.mu.Lock()
		g.kept++
		g.mu.Unlock()
	}
	if gone.onTerminate != nil {
		gone.onTerminate()
	}
	type activity struct {
		ActivityID           string `xml:"ActivityId"`
		AutoScalingGroupName string
		Cause                string
		StatusCode           string
		Progress             int
	}
	writeXML(w, struct {
		XMLName  xml.Name `xml:"TerminateInstanceInAutoScalingGroupResponse"`
		Xmlns    string   `xml:"xmlns,attr"`
		Activity activity `xml:"TerminateInstanceInAutoScalingGroupResult>Activity"`
		ReqID    string   `xml:"ResponseMetadata>RequestId"`
	}{Xmlns: xmlns, Activity: activity{ActivityID: kiln.NewID(), AutoScalingGroupName: g.Name, StatusCode: "InProgress",
		Cause: "instance " + id + " terminated through the API, shrinking the capacity"}, ReqID: kiln.NewID()})
}

func writeXML(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "text/xml")
	w.WriteHeader(http.StatusOK)
	_ = xml.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "text/xml")
	w.WriteHeader(status)
	_ = xml.NewEncoder(w).Encode(struct {
		XMLName xml.Name `xml:"ErrorResponse"`
		Xmlns   string   `xml:"xmlns,attr"`
		Type    string   `xml:"Error>Type"`
		Code    string   `xml:"Error>Code"`
		Message string   `xml:"Error>Message"`
		ReqID   string   `xml:"RequestId"`
	}{Xmlns: xmlns, Type: "Sender", Code: code, Message: msg, ReqID: kiln.NewID()})
}
