package awslocalapp

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/kilnbuild/kiln/shared/awscost"
	"github.com/kilnbuild/kiln/shared/awslocal/meter"
)

// TestAWSMeterLogsTheCostPerBuildAtAnExecutionsEnd: at each execution's end aws-local logs the
// control plane's cost per build so far (the schedule function and host time left out), and the
// costliest principal with its share.
func TestAWSMeterLogsTheCostPerBuildAtAnExecutionsEnd(t *testing.T) {
	var log bytes.Buffer
	m := &awsMeter{Meter: meter.New(), logger: slog.New(slog.NewJSONHandler(&log, nil))}
	m.Add("api", "dynamodb:PutItem", awscost.Usage{DynamoDBWriteUnits: 160}) // $0.0001
	m.Add("schedule", "lambda:run", awscost.Usage{LambdaRequests: 1e6})      // not a build's
	m.Add(meter.HostPrincipal, "codebuild:build", awscost.Usage{HostSeconds: 240})
	m.executionEnded("arn:aws:states:us-east-1:000000000000:execution:kiln-builds:b1", 5) // 5 × $0.000025
	m.executionEnded("arn:aws:states:us-east-1:000000000000:execution:kiln-builds:b2", 5)
	var last map[string]any
	for _, line := range bytes.Split(bytes.TrimSpace(log.Bytes()), []byte("\n")) {
		last = nil
		if err := json.Unmarshal(line, &last); err != nil {
			t.Fatal(err)
		}
	}
	// Two builds: 10 transitions ($0.00025) and 160 write units ($0.0001), halved.
	want := map[string]any{"build_id": "b2", "transitions": 5.0, "executions_ended": 2.0, "top_principal": "states",
		"top_service": "Step Functions", "host_minutes_per_build": 2.0}
	for k, v := range want {
		if last[k] != v {
			t.Errorf("%s = %v, want %v (%v)", k, last[k], v, last)
		}
	}
	if got := last["usd_per_build"].(float64); got < 0.000174999 || got > 0.000175001 {
		t.Errorf("usd_per_build %v, want 0.000175", got)
	}
	if got := last["top_share"].(float64); got < 0.714 || got > 0.715 {
		t.Errorf("top_share %v, want 0.125/0.175", got)
	}
}
