package bench

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/awscost"
	"github.com/kilnbuild/kiln/shared/awslocal/meter"
	"github.com/kilnbuild/kiln/shared/compose/awslocalapp"
	"github.com/kilnbuild/kiln/shared/compose/e2e"
	"github.com/kilnbuild/kiln/shared/kiln"
)

// BenchmarkAWSLocalBuildCost measures what a build costs the AWS control plane: builds of the
// stand-in engine run one after another on kiln aws-local, triggered through the API; the
// meter's reading after them less its reading before, divided by the builds, is priced at
// us-east-1's on-demand prices. The schedule function (a month's cost, whatever the builds) and
// build host time (CodeBuild minutes) are apart. The builds' ends are read from the store, not
// polled through the API, so that the benchmark's own polling is not counted. It reports the
// dollars per build (the goal: under $0.005), the costliest principal's share, and prints each
// principal's cost and calls per build.
//
// With watchers, that many sockets of the stock client (live build events) watch each build
// from its trigger to its end, replaying its log from the start: their joins, the lines and
// statuses posted to them, their connection minutes and the WebSocket API's messages count too.
//
//	go test -run '^$' -bench AWSLocalBuildCost -benchtime 5x ./shared/compose/e2e/bench/
func BenchmarkAWSLocalBuildCost(b *testing.B) {
	b.Run("aws-local", func(b *testing.B) { buildCost(b, 0) })
	b.Run("aws-local-5-watchers", func(b *testing.B) { buildCost(b, 5) })
}

func buildCost(b *testing.B, watchers int) {
	w := e2e.NewWorld(b, e2e.AWSLocal)
	pid := w.AddShooter(b)
	sid := w.AddSetting(b, pid, nil)["id"].(string)
	var c *e2e.LiveClient
	if watchers > 0 {
		c = e2e.NewLiveClient(b)
	}
	before, endedBefore := w.AWS.MeterReading(), w.AWS.ExecutionsEnded()
	n := 0
	for b.Loop() {
		id := w.Trigger(b, pid, sid, "")
		for i := range watchers {
			name := fmt.Sprint(n, "-", i)
			c.Connect(name, w.URL(), w.Token, map[string]any{"quiet": true})
			c.Do(map[string]any{"op": "join", "name": name, "buildId": id, "fromSeq": 0})
		}
		if got := waitStored(b, w, id); got.Status != kiln.StatusComplete {
			b.Fatalf("build %d ended %s: %s", n, got.Status, got.FailureReason)
		}
		n++
	}
	if watchers > 0 {
		// Every watcher heard its build's end; then they close (their minutes are counted).
		c.Wait(time.Minute, n*watchers, "every watcher's last status", func(e e2e.LiveEvent) bool {
			return e.Ev == "build:status" && e.Field("status") == "complete"
		})
		for i := range n * watchers {
			c.Do(map[string]any{"op": "close", "name": fmt.Sprint(i/watchers, "-", i%watchers)})
		}
		c.Wait(time.Minute, n*watchers, "every watcher closed", func(e e2e.LiveEvent) bool { return e.Ev == "disconnect" })
		time.Sleep(500 * time.Millisecond) // their $disconnect
	}
	deadline := time.Now().Add(30 * time.Second)
	for w.AWS.ExecutionsEnded() < endedBefore+n && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond) // the executions' transitions come at their ends
	}
	if got := w.AWS.ExecutionsEnded() - endedBefore; got != n {
		b.Fatalf("%d executions reported their transitions, want %d", got, n)
	}
	delta := w.AWS.MeterReading().Sub(before)
	per := delta.Without(awslocalapp.BackgroundPrincipals...).Scale(1 / float64(n))
	cost := awscost.USEast1.Cost(per.Total())
	spenders := per.Spenders(awscost.USEast1)
	b.ReportMetric(cost.Total, "usd/build")
	if len(spenders) > 0 && cost.Total > 0 {
		b.ReportMetric(spenders[0].Cost.Total/cost.Total, "top-share")
	}
	b.ReportMetric(per.Total().StateTransitions, "transitions/build")
	b.ReportMetric(delta[meter.HostPrincipal].Usage.HostSeconds/60/float64(n), "host-min/build")
	b.ReportMetric(0, "ns/op")
	printCostReport(fmt.Sprintf("%d builds, %d watchers each", n, watchers), cost, spenders, per, delta["schedule"])
}

// waitStored waits for a build to end, reading the store directly (no AWS call is metered).
func waitStored(b *testing.B, w *e2e.World, id string) *kiln.Build {
	b.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		got, err := w.AWS.Store().GetBuild(context.Background(), w.OrgID, id)
		if err != nil {
			b.Fatal(err)
		}
		if got.Status.Terminal() {
			return got
		}
		if time.Now().After(deadline) {
			b.Fatalf("build %s is still %s after 2 minutes", id, got.Status)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func printCostReport(what string, cost awscost.Cost, spenders []meter.Spender, per meter.Reading, schedule meter.Principal) {
	var out strings.Builder
	service, most := cost.Largest()
	fmt.Fprintf(&out, "AWSLocalBuildCost: %s; the control plane's cost per build $%.6f (goal < $0.005); costliest service %s ($%.6f)\n", what, cost.Total, service, most)
	fmt.Fprintf(&out, "  by service: Step Functions $%.6f, Lambda $%.6f, DynamoDB $%.6f, S3 $%.6f, SQS $%.6f, API Gateway $%.6f, CloudWatch $%.6f\n",
		cost.StepFunctions, cost.Lambda, cost.DynamoDB, cost.S3, cost.SQS, cost.APIGateway, cost.CloudWatch)
	for _, s := range spenders {
		u := per[s.Name].Usage
		fmt.Fprintf(&out, "  %-10s $%.6f (%.0f%%): %.1f transitions, %.1f Lambda requests, %.3f GB-s, %.1f RRU, %.1f WRU, S3 %.1f tier-1 %.1f tier-2, %.1f SQS, %.1f API requests, %.1f WebSocket messages, %.2f connection minutes, %.1f free calls\n",
			s.Name, s.Cost.Total, 100*s.Cost.Total/max(cost.Total, 1e-12), u.StateTransitions, u.LambdaRequests, u.LambdaArmGBSeconds+u.LambdaX86GBSeconds,
			u.DynamoDBReadUnits, u.DynamoDBWriteUnits, u.S3Tier1Requests, u.S3Tier2Requests, u.SQSRequests, u.APIGatewayRequests, u.WebSocketMessages, u.WebSocketConnectionMinutes, u.FreeRequests)
		calls := per[s.Name].Calls
		actions := make([]string, 0, len(calls))
		for a := range calls {
			actions = append(actions, a)
		}
		sort.Slice(actions, func(i, j int) bool { return calls[actions[i]] > calls[actions[j]] })
		var parts []string
		for _, a := range actions {
			parts = append(parts, fmt.Sprintf("%s %.1f", a, calls[a]))
		}
		fmt.Fprintf(&out, "             calls per build: %s\n", strings.Join(parts, ", "))
	}
	fmt.Fprintf(&out, "  apart: the schedule function cost $%.6f over the run (%.0f invocations; at one a minute, $%.2f a month)\n",
		awscost.USEast1.Cost(schedule.Usage).Total, schedule.Usage.LambdaRequests,
		awscost.USEast1.Cost(schedule.Usage).Total/max(schedule.Usage.LambdaRequests, 1)*60*24*30)
	fmt.Print(out.String())
}
