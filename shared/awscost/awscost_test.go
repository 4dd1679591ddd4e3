package awscost

import (
	"math"
	"net/url"
	"testing"
	"time"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b)) }

func TestLambdaInvocationBillsMillisecondsTimesMemory(t *testing.T) {
	for _, tt := range []struct {
		name     string
		took     time.Duration
		memoryMB int
		arch     Architecture
		arm, x86 float64
	}{
		{"a second at 1 GB on Arm", time.Second, 1024, Arm64, 1, 0},
		{"rounded up to the millisecond", 1500 * time.Microsecond, 1024, Arm64, 0.002, 0},
		{"an instant is a millisecond", 0, 512, Arm64, 0.0005, 0},
		{"256 MB for 200 ms", 200 * time.Millisecond, 256, Arm64, 0.05, 0},
		{"x86 apart", time.Second, 2048, X8664, 0, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			u := LambdaInvocation(tt.took, tt.memoryMB, tt.arch)
			if u.LambdaRequests != 1 || !near(u.LambdaArmGBSeconds, tt.arm) || !near(u.LambdaX86GBSeconds, tt.x86) {
				t.Fatalf("got %+v, want 1 request, %v Arm and %v x86 GB-s", u, tt.arm, tt.x86)
			}
		})
	}
}

func TestRequestSizesAreBilledInChunks(t *testing.T) {
	for _, tt := range []struct {
		name string
		got  float64
		want float64
	}{
		{"SQS empty", SQSRequest(0).SQSRequests, 1},
		{"SQS 64 KB", SQSRequest(64 << 10).SQSRequests, 1},
		{"SQS 64 KB + 1", SQSRequest(64<<10 + 1).SQSRequests, 2},
		{"SQS 256 KB", SQSRequest(256 << 10).SQSRequests, 4},
		{"API Gateway 1 KB", APIGatewayRequest(1 << 10).APIGatewayRequests, 1},
		{"API Gateway 513 KB", APIGatewayRequest(513 << 10).APIGatewayRequests, 2},
		{"DynamoDB eventually consistent 3.5 KB", DynamoDBRead(3500, false, false), 0.5},
		{"DynamoDB strongly consistent 8 KB", DynamoDBRead(8<<10, true, false), 2},
		{"DynamoDB eventually consistent 8 KB", DynamoDBRead(8<<10, false, false), 1},
		{"DynamoDB transactional read 8 KB", DynamoDBRead(8<<10, false, true), 4},
		{"DynamoDB write 1 KB", DynamoDBWrite(1<<10, false), 1},
		{"DynamoDB write 3 KB", DynamoDBWrite(3<<10, false), 3},
		{"DynamoDB transactional write 3 KB", DynamoDBWrite(3<<10, true), 6},
		{"DynamoDB write of nothing", DynamoDBWrite(0, false), 1},
	} {
		if !near(tt.got, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, tt.got, tt.want)
		}
	}
}

func TestS3RequestClasses(t *testing.T) {
	q := func(s string) url.Values { v, _ := url.ParseQuery(s); return v }
	for _, tt := range []struct {
		name          string
		method, query string
		hasKey        bool
		want          Usage
	}{
		{"PutObject", "PUT", "", true, Usage{S3Tier1Requests: 1}},
		{"UploadPart", "PUT", "partNumber=1&uploadId=x", true, Usage{S3Tier1Requests: 1}},
		{"CreateMultipartUpload", "POST", "uploads", true, Usage{S3Tier1Requests: 1}},
		{"CompleteMultipartUpload", "POST", "uploadId=x", true, Usage{S3Tier1Requests: 1}},
		{"ListObjectsV2", "GET", "list-type=2&prefix=a", false, Usage{S3Tier1Requests: 1}},
		{"ListMultipartUploads", "GET", "uploads", false, Usage{S3Tier1Requests: 1}},
		{"ListParts", "GET", "uploadId=x", true, Usage{S3Tier1Requests: 1}},
		{"GetObject", "GET", "", true, Usage{S3Tier2Requests: 1}},
		{"HeadObject", "HEAD", "", true, Usage{S3Tier2Requests: 1}},
		{"GetBucketLocation", "GET", "location", false, Usage{S3Tier2Requests: 1}},
		{"DeleteObject", "DELETE", "", true, Usage{S3FreeRequests: 1}},
		{"AbortMultipartUpload", "DELETE", "uploadId=x", true, Usage{S3FreeRequests: 1}},
		{"DeleteObjects", "POST", "delete", false, Usage{S3FreeRequests: 1}},
	} {
		if got := S3Request(tt.method, q(tt.query), tt.hasKey); got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func TestCostPricesEachServiceAndLeavesHostTimeOut(t *testing.T) {
	for _, tt := range []struct {
		name    string
		u       Usage
		want    float64
		largest string
	}{
		{"a thousand transitions", Usage{StateTransitions: 1000}, 0.025, "Step Functions"},
		{"a million Lambda requests and 1000 Arm GB-s", Usage{LambdaRequests: 1e6, LambdaArmGBSeconds: 1000}, 0.20 + 0.0133334, "Lambda"},
		{"a million read and write units", Usage{DynamoDBReadUnits: 1e6, DynamoDBWriteUnits: 1e6}, 0.75, "DynamoDB"},
		{"a thousand S3 requests of each tier, deletes free", Usage{S3Tier1Requests: 1000, S3Tier2Requests: 1000, S3FreeRequests: 1e9}, 0.0054, "S3"},
		{"a million SQS requests", Usage{SQSRequests: 1e6}, 0.40, "SQS"},
		{"a million HTTP API requests", Usage{APIGatewayRequests: 1e6}, 1, "API Gateway"},
		{"a thousand PutMetricData", Usage{CloudWatchRequests: 1000}, 0.01, "CloudWatch"},
		{"free APIs and host time cost nothing here", Usage{FreeRequests: 1e9, HostSeconds: 1e6}, 0, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := USEast1.Cost(tt.u)
			if !near(c.Total, tt.want) {
				t.Fatalf("total %v, want %v (%+v)", c.Total, tt.want, c)
			}
			if name, _ := c.Largest(); name != tt.largest {
				t.Fatalf("largest %q, want %q", name, tt.largest)
			}
		})
	}
}

func TestUsageArithmetic(t *testing.T) {
	a := Usage{StateTransitions: 10, DynamoDBWriteUnits: 4, HostSeconds: 60, SQSRequests: 2}
	b := Usage{StateTransitions: 4, DynamoDBWriteUnits: 1, HostSeconds: 30}
	if got := a.Sub(b); got != (Usage{StateTransitions: 6, DynamoDBWriteUnits: 3, HostSeconds: 30, SQSRequests: 2}) {
		t.Fatalf("a-b = %+v", got)
	}
	if got := a.Add(b).Scale(0.5); got != (Usage{StateTransitions: 7, DynamoDBWriteUnits: 2.5, HostSeconds: 45, SQSRequests: 1}) {
		t.Fatalf("(a+b)/2 = %+v", got)
	}
}
