// Package awscost is what AWS would charge for a use of its services: the units its pricing pages
// bill (Step Functions state transitions, Lambda requests and GB-seconds, DynamoDB read and write
// request units, S3 requests by class, SQS requests, API Gateway requests, CloudWatch API
// requests), the rules that turn a call into those units, and a table of on-demand prices. It
// knows nothing of aws-local: the meter there counts, this package prices.
package awscost

import "time"

// Usage is an amount of AWS use, in the units AWS bills. Build host time (CodeBuild, EC2) is
// counted apart and never priced into the control plane's cost.
type Usage struct {
	// StateTransitions are Step Functions standard workflow transitions (every state entered,
	// retries included).
	StateTransitions float64
	// LambdaRequests are function invocations; LambdaArmGBSeconds and LambdaX86GBSeconds their
	// billed duration (rounded up to the millisecond) × configured memory, by architecture.
	LambdaRequests                         float64
	LambdaArmGBSeconds, LambdaX86GBSeconds float64
	// DynamoDBReadUnits and DynamoDBWriteUnits are on-demand read and write request units.
	DynamoDBReadUnits, DynamoDBWriteUnits float64
	// S3Tier1Requests are PUT, COPY, POST and LIST requests; S3Tier2Requests GET, HEAD and every
	// other billed request; S3FreeRequests DELETE and multipart aborts, which S3 does not bill.
	S3Tier1Requests, S3Tier2Requests, S3FreeRequests float64
	// SQSRequests are standard queue requests, each 64 KB chunk of a payload one request.
	SQSRequests float64
	// APIGatewayRequests are HTTP API requests, each 512 KB of a request one request.
	APIGatewayRequests float64
	// CloudWatchRequests are CloudWatch API requests (PutMetricData).
	CloudWatchRequests float64
	// WebSocketMessages are WebSocket API messages, sent and received, each 32 KB one message;
	// WebSocketConnectionMinutes the minutes sockets stayed connected.
	WebSocketMessages, WebSocketConnectionMinutes float64
	// FreeRequests are calls of APIs AWS does not bill per call (Step Functions' and CodeBuild's
	// APIs, Auto Scaling's, a Lambda Invoke's own API call: the function's request is billed).
	FreeRequests float64
	// HostSeconds is build host time (CodeBuild builds, EC2 hosts): apart, never in Cost.Total.
	HostSeconds float64
}

// Add returns u plus v.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		StateTransitions:           u.StateTransitions + v.StateTransitions,
		LambdaRequests:             u.LambdaRequests + v.LambdaRequests,
		LambdaArmGBSeconds:         u.LambdaArmGBSeconds + v.LambdaArmGBSeconds,
		LambdaX86GBSeconds:         u.LambdaX86GBSeconds + v.LambdaX86GBSeconds,
		DynamoDBReadUnits:          u.DynamoDBReadUnits + v.DynamoDBReadUnits,
		DynamoDBWriteUnits:         u.DynamoDBWriteUnits + v.DynamoDBWriteUnits,
		S3Tier1Requests:            u.S3Tier1Requests + v.S3Tier1Requests,
		S3Tier2Requests:            u.S3Tier2Requests + v.S3Tier2Requests,
		S3FreeRequests:             u.S3FreeRequests + v.S3FreeRequests,
		SQSRequests:                u.SQSRequests + v.SQSRequests,
		APIGatewayRequests:         u.APIGatewayRequests + v.APIGatewayRequests,
		CloudWatchRequests:         u.CloudWatchRequests + v.CloudWatchRequests,
		WebSocketMessages:          u.WebSocketMessages + v.WebSocketMessages,
		FreeRequests:               u.FreeRequests + v.FreeRequests,
		WebSocketConnectionMinutes: u.WebSocketConnectionMinutes + v.WebSocketConnectionMinutes,
		HostSeconds:                u.HostSeconds + v.HostSeconds,
	}
}

// Scale returns u with every amount multiplied by f (1/n: a share of n builds).
func (u Usage) Scale(f float64) Usage {
	return Usage{
		StateTransitions:           u.StateTransitions * f,
		LambdaRequests:             u.LambdaRequests * f,
		LambdaArmGBSeconds:         u.LambdaArmGBSeconds * f,
		LambdaX86GBSeconds:         u.LambdaX86GBSeconds * f,
		DynamoDBReadUnits:          u.DynamoDBReadUnits * f,
		DynamoDBWriteUnits:         u.DynamoDBWriteUnits * f,
		S3Tier1Requests:            u.S3Tier1Requests * f,
		S3Tier2Requests:            u.S3Tier2Requests * f,
		S3FreeRequests:             u.S3FreeRequests * f,
		SQSRequests:                u.SQSRequests * f,
		APIGatewayRequests:         u.APIGatewayRequests * f,
		CloudWatchRequests:         u.CloudWatchRequests * f,
		WebSocketMessages:          u.WebSocketMessages * f,
		FreeRequests:               u.FreeRequests * f,
		WebSocketConnectionMinutes: u.WebSocketConnectionMinutes * f,
		HostSeconds:                u.HostSeconds * f,
	}
}

// Sub returns u minus v (the use between two readings).
func (u Usage) Sub(v Usage) Usage { return u.Add(v.Scale(-1)) }

// Architecture of a Lambda function.
type Architecture string

const (
	Arm64 Architecture = "arm64"
	X8664 Architecture = "x86_64"
)

// LambdaInvocation is the use of one invocation of a function with memoryMB of memory that ran
// for took: one request, and took rounded up to the millisecond × memory in GB (MB/1024), as
// Lambda bills it.
func LambdaInvocation(took time.Duration, memoryMB int, arch Architecture) Usage {
	ms := took.Milliseconds()
	if time.Duration(ms)*time.Millisecond < took || ms == 0 {
		ms++
	}
	gbs := float64(ms) / 1000 * float64(memoryMB) / 1024
	if arch == X8664 {
		return Usage{LambdaRequests: 1, LambdaX86GBSeconds: gbs}
	}
	return Usage{LambdaRequests: 1, LambdaArmGBSeconds: gbs}
}

// chunks is how many units of size a payload of n bytes is billed as (at least one).
func chunks(n, size int64) float64 {
	if n <= 0 {
		return 1
	}
	return float64((n + size - 1) / size)
}

// SQSRequest is one SQS API request carrying payload bytes: a request per 64 KB chunk.
func SQSRequest(payload int64) Usage { return Usage{SQSRequests: chunks(payload, 64<<10)} }

// WebSocketMessage is one WebSocket API message of size bytes: metered in 32 KB increments.
func WebSocketMessage(size int64) Usage { return Usage{WebSocketMessages: chunks(size, 32<<10)} }

// APIGatewayRequest is one HTTP API request of size bytes: metered in 512 KB increments.
func APIGatewayRequest(size int64) Usage { return Usage{APIGatewayRequests: chunks(size, 512<<10)} }

// DynamoDBRead is the read request units of reading itemBytes: 4 KB per unit (rounded up), half
// as much eventually consistent, twice as much in a transaction.
func DynamoDBRead(itemBytes int64, consistent, transactional bool) float64 {
	units := chunks(itemBytes, 4<<10)
	switch {
	case transactional:
		return 2 * units
	case consistent:
		return units
	}
	return units / 2
}

// DynamoDBWrite is the write request units of writing itemBytes: 1 KB per unit (rounded up),
// twice as much in a transaction.
func DynamoDBWrite(itemBytes int64, transactional bool) float64 {
	units := chunks(itemBytes, 1<<10)
	if transactional {
		return 2 * units
	}
	return units
}
