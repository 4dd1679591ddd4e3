package awscost

// Prices are on-demand prices in US dollars, each per one unit of Usage.
type Prices struct {
	Region string
	// StateTransition is a Step Functions standard workflow transition.
	StateTransition float64
	// LambdaRequest is an invocation; LambdaArmGBSecond and LambdaX86GBSecond a GB-second of
	// duration (the first pricing tier).
	LambdaRequest, LambdaArmGBSecond, LambdaX86GBSecond float64
	// DynamoDBReadUnit and DynamoDBWriteUnit are on-demand request units (Standard table class).
	DynamoDBReadUnit, DynamoDBWriteUnit float64
	// S3Tier1Request and S3Tier2Request are S3 Standard requests.
	S3Tier1Request, S3Tier2Request float64
	// SQSRequest is a standard queue request (first tier).
	SQSRequest float64
	// APIGatewayRequest is an HTTP API request (first tier).
	APIGatewayRequest float64
	// CloudWatchRequest is a CloudWatch API request (PutMetricData).
	CloudWatchRequest float64
	// WebSocketMessage and WebSocketConnectionMinute are a WebSocket API's message (32 KB) and
	// connection minute (first tier).
	WebSocketMessage, WebSocketConnectionMinute float64
}

// USEast1 are the on-demand prices of US East (N. Virginia), free tiers not deducted, as AWS's
// pricing pages give them (read 2026-11). Where the page's figure could not be read here, the
// figure is the one AWS has published for the region, marked "not read from the page".
var USEast1 = Prices{
	Region: "us-east-1",
	// https://aws.amazon.com/step-functions/pricing/: $0.025 per 1,000 state transitions.
	StateTransition: 0.025 / 1000,
	// https://aws.amazon.com/lambda/pricing/: $0.20 per 1M requests; Arm $0.0000133334 and x86
	// $0.0000166667 per GB-second (first tier). Not read from the page (its price table is not
	// in its text); the same figures are quoted by third parties as of 2026.
	LambdaRequest: 0.20 / 1e6, LambdaArmGBSecond: 0.0000133334, LambdaX86GBSecond: 0.0000166667,
	// https://aws.amazon.com/dynamodb/pricing/on-demand/: $0.125 per million read request units,
	// $0.625 per million write request units (since the November 2024 price cut). Not read from
	// the page (its price table is not in its text); the same figures are quoted by third parties.
	DynamoDBReadUnit: 0.125 / 1e6, DynamoDBWriteUnit: 0.625 / 1e6,
	// https://aws.amazon.com/s3/pricing/: S3 Standard, $0.005 per 1,000 PUT, COPY, POST, LIST
	// requests; $0.0004 per 1,000 GET, SELECT and all other requests. Not read from the page
	// (its price table is not in its text); the same figures are quoted by third parties.
	S3Tier1Request: 0.005 / 1000, S3Tier2Request: 0.0004 / 1000,
	// https://aws.amazon.com/sqs/pricing/: standard queue, $0.40 per million requests (first
	// 100 billion a month), a 64 KB chunk of a payload one request. Not read from the page; the
	// same figure and the 64 KB rule are quoted by third parties.
	SQSRequest: 0.40 / 1e6,
	// https://aws.amazon.com/api-gateway/pricing/: HTTP APIs, $1.00 per million requests (first
	// 300 million a month). Not read from the page.
	APIGatewayRequest: 1.00 / 1e6,
	// https://aws.amazon.com/cloudwatch/pricing/: API requests (PutMetricData), $0.01 per 1,000.
	// Not read from the page.
	CloudWatchRequest: 0.01 / 1000,
	// https://aws.amazon.com/api-gateway/pricing/: WebSocket APIs, $1.00 per million messages
	// (first billion a month, metered in 32 KB increments) and $0.25 per million connection
	// minutes. Not read from the page; the same figures are quoted by third parties as of 2026.
	WebSocketMessage: 1.00 / 1e6, WebSocketConnectionMinute: 0.25 / 1e6,
}

// Cost is what a Usage costs, by service; Total is the control plane's (host time is apart).
type Cost struct {
	StepFunctions, Lambda, DynamoDB, S3, SQS, APIGateway, CloudWatch float64
	Total                                                            float64
}

// Cost prices u.
func (p Prices) Cost(u Usage) Cost {
	c := Cost{
		StepFunctions: u.StateTransitions * p.StateTransition,
		Lambda:        u.LambdaRequests*p.LambdaRequest + u.LambdaArmGBSeconds*p.LambdaArmGBSecond + u.LambdaX86GBSeconds*p.LambdaX86GBSecond,
		DynamoDB:      u.DynamoDBReadUnits*p.DynamoDBReadUnit + u.DynamoDBWriteUnits*p.DynamoDBWriteUnit,
		S3:            u.S3Tier1Requests*p.S3Tier1Request + u.S3Tier2Requests*p.S3Tier2Request,
		SQS:           u.SQSRequests * p.SQSRequest,
		APIGateway: u.APIGatewayRequests*p.APIGatewayRequest + u.WebSocketMessages*p.WebSocketMessage +
			u.WebSocketConnectionMinutes*p.WebSocketConnectionMinute,
		CloudWatch: u.CloudWatchRequests * p.CloudWatchRequest,
	}
	c.Total = c.StepFunctions + c.Lambda + c.DynamoDB + c.S3 + c.SQS + c.APIGateway + c.CloudWatch
	return c
}

// Largest names the service that costs most, and its cost.
func (c Cost) Largest() (string, float64) {
	name, most := "", 0.0
	for _, s := range []struct {
		name string
		v    float64
	}{{"Step Functions", c.StepFunctions}, {"Lambda", c.Lambda}, {"DynamoDB", c.DynamoDB}, {"S3", c.S3}, {"SQS", c.SQS}, {"API Gateway", c.APIGateway}, {"CloudWatch", c.CloudWatch}} {
		if s.v > most {
			name, most = s.name, s.v
		}
	}
	return name, most
}
