package e2e

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/kilnbuild/kiln/shared/syncbuf"
)

// failures records what a check reports instead of failing the test.
type failures struct {
	testing.TB
	errs []string
}

func (f *failures) Helper() {}
func (f *failures) Errorf(format string, args ...any) {
	f.errs = append(f.errs, fmt.Sprintf(format, args...))
}

// TestCheckRefusals: a refusal aws-local logged fails the test unless the test expected it;
// other log lines never do.
func TestCheckRefusals(t *testing.T) {
	const task = "User: arn:aws:sts::000000000000:assumed-role/TaskFunctionRole1/task is not authorized to perform: dynamodb:PutItem on resource: arn:aws:dynamodb:us-east-1:000000000000:table/kiln"
	const deliver = "User: arn:aws:sts::000000000000:assumed-role/DeliverFunctionRole1/deliver is not authorized to perform: sqs:SendMessage on resource: arn:aws:sqs:us-east-1:000000000000:kiln-deliveries"
	for _, tt := range []struct {
		name     string
		refused  []string // errors of the refusals logged
		other    []string // other messages logged
		expected []string
		failed   bool
	}{
		{name: "none", other: []string{"aws-local IAM: checking calls against the template's role"}},
		{name: "unexpected", refused: []string{task}, failed: true},
		{name: "expected", refused: []string{task}, expected: []string{"/task is not authorized to perform: dynamodb:"}},
		{name: "another than expected", refused: []string{task}, expected: []string{"/api is not authorized"}, failed: true},
		{name: "the deliver role's sqs:SendMessage, granted now", refused: []string{deliver}, failed: true},
		{name: "a message quoting the refusal's text is no refusal", other: []string{"aws-local IAM: refused, said the build log"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ts := &Server{Logs: &syncbuf.Buffer{}, refusals: &refusals{}}
			logger := slog.New(slog.NewJSONHandler(ts.Logs, nil))
			for _, m := range tt.other {
				logger.Info(m)
			}
			for _, e := range tt.refused {
				logger.Warn(refusalMessage, slog.String("method", "POST"), slog.String("path", "/"), slog.String("error", e))
			}
			if len(tt.expected) > 0 {
				ExpectRefusals(t, ts, tt.expected...)
			}
			f := &failures{TB: t}
			checkRefusals(f, ts)
			if failed := len(f.errs) > 0; failed != tt.failed {
				t.Fatalf("failed %v, want %v: %v", failed, tt.failed, f.errs)
			}
			if tt.failed && !strings.Contains(f.errs[0], "e2e.ExpectRefusals") {
				t.Errorf("the failure does not say how to declare a refusal: %s", f.errs[0])
			}
		})
	}
}
