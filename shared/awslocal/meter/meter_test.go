package meter

import (
	"context"
	"encoding/json"
	"hash/crc32"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kilnbuild/kiln/shared/awscost"
)

func byHeader(r *http.Request) string { return r.Header.Get("X-Principal") }

// fakeDynamoDB answers as DynamoDB Local does: ConsumedCapacity only when asked, units given.
func fakeDynamoDB(t *testing.T, units string, fail bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.ContentLength != int64(len(body)) {
			t.Errorf("Content-Length %d, body %d bytes", r.ContentLength, len(body))
		}
		var in struct{ ReturnConsumedCapacity string }
		json.Unmarshal(body, &in)
		if fail {
			w.WriteHeader(400)
			io.WriteString(w, `{"__type":"com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException"}`)
			return
		}
		if in.ReturnConsumedCapacity == "" || in.ReturnConsumedCapacity == "NONE" {
			io.WriteString(w, `{"Item":{}}`)
			return
		}
		answer := `{"Item":{},"ConsumedCapacity":` + units + `}`
		w.Header().Set("X-Amz-Crc32", strconv.FormatUint(uint64(crc32.ChecksumIEEE([]byte(answer))), 10))
		io.WriteString(w, answer)
	})
}

func TestDynamoDBCountsTheUnitsDynamoDBReports(t *testing.T) {
	for _, tt := range []struct {
		name, op, body, units string
		fail                  bool
		read, write           float64
		answer                string
	}{
		{"a read, not asked: units counted and taken out of the answer", "GetItem", `{"TableName":"kiln"}`,
			`{"TableName":"kiln","CapacityUnits":0.5}`, false, 0.5, 0, `{"Item":{}}`},
		{"a write with its indexes: the table's and the indexes' units", "PutItem", `{"TableName":"kiln"}`,
			`{"TableName":"kiln","CapacityUnits":1.0,"Table":{"CapacityUnits":1.0},"GlobalSecondaryIndexes":{"GSI1":{"CapacityUnits":1.0},"GSI2":{"CapacityUnits":1.0}}}`, false, 0, 3, `{"Item":{}}`},
		{"a transaction: a list", "TransactWriteItems", `{"TransactItems":[{},{}]}`,
			`[{"TableName":"kiln","CapacityUnits":4.0},{"TableName":"other","CapacityUnits":2.0}]`, false, 0, 6, `{"Item":{}}`},
		{"asked by the caller: the answer keeps it", "Query", `{"TableName":"kiln","ReturnConsumedCapacity":"TOTAL"}`,
			`{"TableName":"kiln","CapacityUnits":2.0}`, false, 2, 0, `{"Item":{},"ConsumedCapacity":{"TableName":"kiln","CapacityUnits":2.0}}`},
		{"a failed condition: a write unit an item", "UpdateItem", `{"TableName":"kiln"}`, ``, true, 0, 1,
			`{"__type":"com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException"}`},
		{"a failed transaction: two units an item", "TransactWriteItems", `{"TransactItems":[{},{},{}]}`, ``, true, 0, 6,
			`{"__type":"com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException"}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := New()
			h := m.DynamoDB(byHeader, fakeDynamoDB(t, tt.units, tt.fail))
			r := httptest.NewRequest("POST", "/", strings.NewReader(tt.body))
			r.Header.Set("X-Amz-Target", "DynamoDB_20120810."+tt.op)
			r.Header.Set("X-Principal", "task")
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if got := strings.TrimSpace(w.Body.String()); got != tt.answer {
				t.Fatalf("answer %s, want %s", got, tt.answer)
			}
			if sum := w.Header().Get("X-Amz-Crc32"); sum != "" && sum != strconv.FormatUint(uint64(crc32.ChecksumIEEE(w.Body.Bytes())), 10) {
				t.Fatalf("X-Amz-Crc32 %s does not match the answer's body", sum)
			}
			p := m.Read()["task"]
			if p.Usage.DynamoDBReadUnits != tt.read || p.Usage.DynamoDBWriteUnits != tt.write || p.Calls["dynamodb:"+tt.op] != 1 {
				t.Fatalf("counted %+v, want %v read and %v write units in one %s", p, tt.read, tt.write, tt.op)
			}
		})
	}
}

func TestDynamoDBTableOperationsAreFree(t *testing.T) {
	m := New()
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if strings.Contains(string(body), "ReturnConsumedCapacity") {
			t.Errorf("DescribeTable was changed: %s", body)
		}
	})
	r := httptest.NewRequest("POST", "/", strings.NewReader(`{"TableName":"kiln"}`))
	r.Header.Set("X-Amz-Target", "DynamoDB_20120810.DescribeTable")
	m.DynamoDB(func(*http.Request) string { return "api" }, next).ServeHTTP(httptest.NewRecorder(), r)
	if u := m.Read()["api"].Usage; u != (awscost.Usage{FreeRequests: 1}) {
		t.Fatalf("DescribeTable counted %+v", u)
	}
}

func TestS3SQSAndFreeRequests(t *testing.T) {
	m := New()
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	who := func(*http.Request) string { return "codebuild" }
	for _, r := range []*http.Request{
		httptest.NewRequest("PUT", "/bucket/artifacts/a.tar.gz?partNumber=1&uploadId=u", nil),
		httptest.NewRequest("GET", "/bucket/artifacts/a.tar.gz", nil),
		httptest.NewRequest("GET", "/bucket?list-type=2", nil),
		httptest.NewRequest("DELETE", "/bucket/artifacts/a.tar.gz", nil),
	} {
		m.S3(who, ok).ServeHTTP(httptest.NewRecorder(), r)
	}
	send := httptest.NewRequest("POST", "/", strings.NewReader(strings.Repeat("x", 100<<10)))
	send.Header.Set("X-Amz-Target", "AmazonSQS.SendMessage")
	m.SQS(who, ok).ServeHTTP(httptest.NewRecorder(), send)
	start := httptest.NewRequest("POST", "/", strings.NewReader(`{}`))
	start.Header.Set("X-Amz-Target", "AWSStepFunctions.SendTaskHeartbeat")
	w := httptest.NewRecorder()
	m.Free("states", who, ok).ServeHTTP(w, start)
	if w.Body.String() != "ok" {
		t.Fatalf("the answer did not get through: %q", w.Body.String())
	}
	p := m.Read()["codebuild"]
	want := awscost.Usage{S3Tier1Requests: 2, S3Tier2Requests: 1, S3FreeRequests: 1, SQSRequests: 2, FreeRequests: 1}
	if p.Usage != want {
		t.Fatalf("usage %+v, want %+v", p.Usage, want)
	}
	if p.Calls["sqs:SendMessage"] != 1 || p.Calls["states:SendTaskHeartbeat"] != 1 || p.Calls["s3:tier1 PUT"] != 1 {
		t.Fatalf("calls %v", p.Calls)
	}
}

func TestCodeBuildHostTimeIsCountedOncePerEndedBuild(t *testing.T) {
	m := New()
	answer := `{"builds":[{"id":"kiln-hosts:1","buildStatus":"IN_PROGRESS","startTime":100}]}`
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, answer) })
	get := func() {
		r := httptest.NewRequest("POST", "/", strings.NewReader(`{"ids":["kiln-hosts:1"]}`))
		r.Header.Set("X-Amz-Target", "CodeBuild_20161006.BatchGetBuilds")
		w := httptest.NewRecorder()
		m.CodeBuild(func(*http.Request) string { return "states" }, next).ServeHTTP(w, r)
		if w.Body.String() != answer {
			t.Fatalf("answer changed: %s", w.Body.String())
		}
	}
	get()
	answer = `{"builds":[{"id":"kiln-hosts:1","buildStatus":"SUCCEEDED","startTime":100,"endTime":190.5}]}`
	get()
	get()
	r := m.Read()
	if h := r[HostPrincipal].Usage.HostSeconds; h != 90.5 {
		t.Fatalf("host seconds %v, want 90.5 (once)", h)
	}
	if n := r["states"].Calls["codebuild:BatchGetBuilds"]; n != 3 {
		t.Fatalf("BatchGetBuilds counted %v times, want 3", n)
	}
}

type sleeper time.Duration

func (s sleeper) Invoke(context.Context, []byte) ([]byte, error) {
	time.Sleep(time.Duration(s))
	return []byte("{}"), nil
}

func TestLambdaCountsRequestsAndGBSecondsUnderTheFunction(t *testing.T) {
	m := New()
	h := m.Lambda("deliver", Function{MemoryMB: 1024, Architecture: awscost.Arm64}, sleeper(20*time.Millisecond),
		func(p []byte) (string, awscost.Usage) { return "sqs:ReceiveMessage", awscost.SQSRequest(int64(len(p))) })
	for range 2 {
		if _, err := h.Invoke(context.Background(), []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
	}
	u := m.Read()["deliver"].Usage
	if u.LambdaRequests != 2 || u.SQSRequests != 2 || u.LambdaArmGBSeconds < 0.040 || u.LambdaArmGBSeconds > 0.5 {
		t.Fatalf("usage %+v: want 2 requests, 2 SQS requests, ≥ 0.04 Arm GB-s", u)
	}
}

func TestReadingsSubtractScaleAndRankSpenders(t *testing.T) {
	m := New()
	m.Add("task", "dynamodb:PutItem", awscost.Usage{DynamoDBWriteUnits: 2})
	before := m.Read()
	m.Transitions("states", 8)
	m.Transitions("states", 8)
	m.Add("task", "dynamodb:PutItem", awscost.Usage{DynamoDBWriteUnits: 4})
	m.Add("schedule", "dynamodb:Query", awscost.Usage{DynamoDBReadUnits: 1e6})
	per := m.Read().Sub(before).Without("schedule").Scale(0.5)
	if got := per.Total(); got != (awscost.Usage{StateTransitions: 8, DynamoDBWriteUnits: 2}) {
		t.Fatalf("per build %+v", got)
	}
	if per["task"].Calls["dynamodb:PutItem"] != 0.5 {
		t.Fatalf("calls per build %v", per["task"].Calls)
	}
	s := per.Spenders(awscost.USEast1)
	if len(s) != 2 || s[0].Name != "states" || s[1].Name != "task" {
		t.Fatalf("spenders %+v, want states then task", s)
	}
}
