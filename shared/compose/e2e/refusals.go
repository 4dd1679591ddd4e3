package e2e

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/kilnbuild/kiln/shared/awslocal/iam"
)

// refusalMessage is the message aws-local logs for every AWS call its IAM check refuses (the
// guards in front of the stand-ins, the S3 proxy, the metric stand-in).
const refusalMessage = iam.RefusedMessage

// refusals are the refusals a test expects of its aws-local (ExpectRefusals), shared by the
// servers of one world across restarts.
type refusals struct {
	mu       sync.Mutex
	expected []string
}

func (r *refusals) expect(parts []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.expected = append(r.expected, parts...)
}

// allowed reports whether a refusal's line is one the test expects: no refusal is allowed
// otherwise, as AWS would answer it to the deployed stack.
func (r *refusals) allowed(line string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range r.expected {
		if strings.Contains(line, p) {
			return true
		}
	}
	return false
}

// refusalsOf is implemented by *Server, and so by *World.
type refusalsOf interface{ refusalsOf() *refusals }

func (ts *Server) refusalsOf() *refusals { return ts.refusals }

// ExpectRefusals declares that the test provokes IAM refusals on its aws-local (a template
// without a grant, a caller that may not): a refusal whose log line contains one of parts (e.g.
// "/task is not authorized to perform: dynamodb:") does not fail the test. Any other refusal
// aws-local logged fails the test at its end: AWS would have refused the deployed stack the
// same call.
func ExpectRefusals(t testing.TB, w refusalsOf, parts ...string) {
	t.Helper()
	if len(parts) == 0 {
		t.Fatal("ExpectRefusals: say which refusals (a part of their log line)")
	}
	w.refusalsOf().expect(parts)
}

// checkRefusals fails the test for every refusal in aws-local's log (JSON lines) the test did
// not expect.
func checkRefusals(t testing.TB, ts *Server) {
	t.Helper()
	var unexpected []string
	for _, line := range strings.Split(ts.Logs.String(), "\n") {
		if !strings.Contains(line, refusalMessage) {
			continue
		}
		var entry struct{ Msg string }
		if err := json.Unmarshal([]byte(line), &entry); err == nil && entry.Msg != refusalMessage {
			continue
		}
		if !ts.refusalsOf().allowed(line) {
			unexpected = append(unexpected, line)
		}
	}
	if len(unexpected) > 0 {
		t.Errorf("aws-local's IAM refused %d calls AWS would refuse the deployed stack too: grant them in infra/stack, "+
			"or declare those the test provokes with e2e.ExpectRefusals:\n%s", len(unexpected), strings.Join(unexpected, "\n"))
	}
}
