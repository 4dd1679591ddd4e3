package delivery

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/compose/e2e"
	"github.com/kilnbuild/kiln/shared/compose/serve"
)

// retriesThroughSQS: five attempts, 20 ms apart at first (each retry's message hidden a whole
// second, SQS's unit), and a schedule rule that never ticks during the test: whatever the
// deliveries do, they do through the queue.
func retriesThroughSQS(c *serve.Config) {
	e2e.LoopbackAllowed(c)
	c.DeliveryAttempts = 5
	c.DeliveryBackoff = 20 * time.Millisecond
}

// TestDeliveryRetriesGoThroughSQS (issue 36, findings 1 and 2): on aws-local with the stock
// template, a receiver that fails 3 times gets the artifact on the 4th attempt without a tick of
// the schedule rule. Without the deliver role's sqs:SendMessage the sweep cannot fan out, and
// without ReportBatchItemFailures the failed attempt's message is deleted: either way the
// delivery waits for a tick that does not come.
func TestDeliveryRetriesGoThroughSQS(t *testing.T) {
	for _, tc := range []struct {
		name         string
		edits        []e2e.TemplateEdit
		wantRequests int
		wantStatus   string
	}{
		{"the stock template", nil, 4, "succeeded"},
		{"without the deliver role's sqs:SendMessage", []e2e.TemplateEdit{e2e.WithoutAction("deliver", "sqs:SendMessage")}, 0, "pending"},
		{"without ReportBatchItemFailures", []e2e.TemplateEdit{e2e.WithoutBatchItemFailures()}, 1, "delivering"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := e2e.NewWorld(t, e2e.AWSLocal, retriesThroughSQS, e2e.WithTick(time.Hour), e2e.WithTemplate(e2e.WriteTemplate(t, tc.edits...)))
			if tc.wantRequests == 0 {
				e2e.ExpectRefusals(t, w.Server, "/deliver is not authorized to perform: sqs:SendMessage")
			}
			rc := e2e.NewReceiver(t, func(n int) int {
				if n <= 3 {
					return http.StatusInternalServerError
				}
				return http.StatusNoContent
			})
			pid := w.AddShooter(t)
			sid := w.AddSetting(t, pid, map[string]any{"autoDeploy": true, "uploadBuildUrl": rc.URL + "/upload"})["id"].(string)
			id := w.Trigger(t, pid, sid, "")
			w.WaitStatus(t, id, "complete")
			var b map[string]any
			if tc.wantStatus == "succeeded" {
				b = w.WaitDeploy(t, id)
			} else {
				// The stock template's four attempts take about 4 s; give these three times that.
				time.Sleep(12 * time.Second)
				b = w.Do(t, "GET", "/builds/"+id, w.Token, nil).Body
			}
			requestsOK := len(rc.Got()) == tc.wantRequests
			if tc.wantStatus == "delivering" {
				// The retry chain is broken: the message is deleted with its failed attempt. A
				// second sweep of the same build (auto deploy and webhooks each send one) may
				// still make one more attempt, never the four a success needs.
				requestsOK = len(rc.Got()) >= tc.wantRequests && len(rc.Got()) < 4
			}
			if b["autoDeployStatus"] != tc.wantStatus || !requestsOK {
				t.Fatalf("auto deploy %v after %d requests, want %s after %d", b["autoDeployStatus"], len(rc.Got()), tc.wantStatus, tc.wantRequests)
			}
			if tc.wantStatus == "succeeded" && b["autoDeployAttempts"] != float64(4) {
				t.Fatalf("auto deploy attempts %v, want 4", b["autoDeployAttempts"])
			}
			refused := slices.ContainsFunc(strings.Split(w.Logs.String(), "\n"), func(l string) bool {
				return strings.Contains(l, "aws-local IAM: refused") && strings.Contains(l, "DeliverFunctionRole") && strings.Contains(l, "sqs:SendMessage")
			})
			if wantRefused := tc.edits != nil && tc.wantRequests == 0; refused != wantRefused {
				t.Fatalf("the deliver role's sqs:SendMessage refused: %v, want %v", refused, wantRefused)
			}
		})
	}
}

// TestDeliveryThatAlwaysFailsEndsInTheDeadLetterQueue (issue 36): an auto deploy whose receiver
// always answers 500 fails after its 5 attempts with its last error, and its message is in the
// delivery dead-letter queue, which meets the condition of the template's DeliveryDeadLetterAlarm
// (aws-local has no CloudWatch: the condition is evaluated on the queue, nothing is notified).
// Without the redrive policy no message reaches a dead-letter queue.
func TestDeliveryThatAlwaysFailsEndsInTheDeadLetterQueue(t *testing.T) {
	for _, tc := range []struct {
		name     string
		edits    []e2e.TemplateEdit
		wantDead bool
	}{
		{"the stock template", nil, true},
		{"without the redrive policy", []e2e.TemplateEdit{e2e.WithoutRedrive()}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := e2e.NewWorld(t, e2e.AWSLocal, retriesThroughSQS, e2e.WithTick(time.Hour), e2e.WithTemplate(e2e.WriteTemplate(t, tc.edits...)))
			rc := e2e.NewReceiver(t, func(int) int { return http.StatusInternalServerError })
			pid := w.AddShooter(t)
			sid := w.AddSetting(t, pid, map[string]any{"autoDeploy": true, "uploadBuildUrl": rc.URL + "/upload"})["id"].(string)
			id := w.Trigger(t, pid, sid, "")
			b := w.WaitDeploy(t, id)
			if b["autoDeployStatus"] != "failed" || b["autoDeployAttempts"] != float64(5) || !strings.Contains(b["autoDeployError"].(string), "500") {
				t.Fatalf("after delivery: %v", b)
			}
			if !tc.wantDead {
				time.Sleep(3 * time.Second)
				if dead := w.AWS.DeliveryDeadLetters(); len(dead) != 0 || len(w.DeadLetterAlarmsMet()) != 0 {
					t.Fatalf("dead letters %v without a redrive policy", dead)
				}
				return
			}
			w.WaitDeadLetter(t, id, 20*time.Second)
			if met := w.DeadLetterAlarmsMet(); !slices.ContainsFunc(met, func(a string) bool { return strings.HasPrefix(a, "DeliveryDeadLetterAlarm") }) {
				t.Fatalf("alarms met %v, want the DeliveryDeadLetterAlarm", met)
			}
			if n := len(rc.Got()); n != 5 {
				t.Fatalf("the receiver got %d requests, want 5", n)
			}
		})
	}
}

// TestWebhookDeliveryThatAlwaysFailsEndsInTheDeadLetterQueue: a webhook delivery that fails every
// attempt shows failed with its last error in the webhook's delivery log, and its message is in
// the dead-letter queue, without a tick of the schedule rule: recording the delivery sends a
// sweep, as a build ready for auto deploy does.
func TestWebhookDeliveryThatAlwaysFailsEndsInTheDeadLetterQueue(t *testing.T) {
	w := e2e.NewWorld(t, e2e.AWSLocal, retriesThroughSQS, e2e.WithTick(time.Hour))
	hr := e2e.NewHookReceiver(t)
	hr.Fail = 1 << 20
	base := "/organizations/" + w.OrgID + "/webhooks"
	created := w.Do(t, "POST", base, w.Token, map[string]any{"url": hr.URL + "/hooks", "events": []string{"build.complete"}})
	if created.Status != 201 {
		t.Fatalf("create: %d %s", created.Status, created.Raw)
	}
	hook := e2e.Field(t, created.Body, "id")
	pid := w.AddShooter(t)
	sid := w.AddSetting(t, pid, nil)["id"].(string)
	w.WaitStatus(t, w.Trigger(t, pid, sid, ""), "complete")
	deadline := time.Now().Add(60 * time.Second)
	var d map[string]any
	for {
		dels := e2e.Items(t, w.Do(t, "GET", base+"/"+hook+"/deliveries", w.Token, nil))
		if len(dels) == 1 && dels[0]["status"] == "failed" {
			d = dels[0]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("deliveries %v", dels)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if d["attempts"] != float64(5) || !strings.Contains(d["error"].(string), "500") {
		t.Fatalf("delivery %v, want failed after 5 attempts with the receiver's 500", d)
	}
	w.WaitDeadLetter(t, d["id"].(string), 20*time.Second)
}
