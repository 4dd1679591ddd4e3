package stepfunctions

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/awslocal/lambdas"
)

// TestTransitionsCountsEveryStateEnteredAndEveryRetry: an execution through a Pass state, a Task
// that fails once and is retried, and a Succeed state reports four state transitions (Step
// Functions bills a retry as one) once it ends; a second execution reports its own.
func TestTransitionsCountsEveryStateEnteredAndEveryRetry(t *testing.T) {
	var calls atomic.Int32
	fns := httptest.NewServer(lambdas.New(map[string]any{"flaky": func(context.Context, map[string]any) (map[string]any, error) {
		if calls.Add(1)%2 == 1 {
			return nil, errors.New("the first try fails")
		}
		return map[string]any{}, nil
	}}, slog.New(slog.NewTextHandler(io.Discard, nil))))
	t.Cleanup(fns.Close)
	definition := `{"StartAt":"A","States":{
		"A":{"Type":"Pass","Next":"B"},
		"B":{"Type":"Task","Resource":"arn:aws:lambda:local:000000000000:function:flaky","Retry":[{"ErrorEquals":["States.ALL"],"IntervalSeconds":1,"MaxAttempts":2}],"Next":"C"},
		"C":{"Type":"Succeed"}}}`
	got := make(chan string, 4)
	sm, err := Start(context.Background(), Options{Prefix: prefixForTests(t), StateMachineARN: stateMachineARN, Dir: filepath.Join(t.TempDir(), "sfn"),
		Definition: definition, LambdaEndpoint: fns.URL, CodeBuildEndpoint: "http://127.0.0.1:1", EndedFunction: "ended", Log: testLog{t},
		Transitions: func(arn string, n int) { got <- arn[strings.LastIndex(arn, ":")+1:] + " " + strconv.Itoa(n) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sm.Close() })
	for _, name := range []string{"first", "second"} {
		req, _ := http.NewRequest("POST", sm.Endpoint(), strings.NewReader(`{"stateMachineArn":"`+stateMachineARN+`","name":"`+name+`","input":"{}"}`))
		req.Header.Set("X-Amz-Target", "AWSStepFunctions.StartExecution")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("StartExecution: %d", resp.StatusCode)
		}
		select {
		case line := <-got:
			if line != name+" 4" {
				t.Fatalf("reported %q, want %q", line, name+" 4")
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("execution %s: no transitions reported", name)
		}
	}
}
