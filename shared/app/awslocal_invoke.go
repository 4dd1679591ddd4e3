package app

import (
	"net/http"

	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/kilnbuild/kiln/shared/app/awsapp"
)

// DefaultLambdaAddr is where kiln aws-local answers the Lambda Invoke API without
// KILN_LAMBDA_ADDR: the port of `sam local start-lambda`.
const DefaultLambdaAddr = "127.0.0.1:3001"

// awsLocalHandlers are the handlers of the deployment's functions (functions/*), by function
// name, each the one its main hands to lambda.Start: operators and the Step Functions stand-in
// invoke them through the Lambda Invoke API with their real event JSON.
type awsLocalHandlers struct {
	API      http.Handler
	Task     *awsapp.Functions // task and ended
	Deliver  *awsapp.Deliver
	Schedule *awsapp.Schedule
	Admin    *awsapp.Admin
}

func (h awsLocalHandlers) byName() map[string]any {
	return map[string]any{
		"api":      httpadapter.NewV2(h.API).ProxyWithContext,
		"task":     h.Task.Task.Handle,
		"ended":    h.Task.Ended.Handle,
		"deliver":  h.Deliver.Handle,
		"schedule": h.Schedule.Handle,
		"admin":    h.Admin.Handle,
	}
}
