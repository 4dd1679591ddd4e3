package awslocalapp

import (
	"net/http"

	"github.com/kilnbuild/kiln/shared/awslocal/iam"

	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/kilnbuild/kiln/shared/compose/awsapp"
)

// DefaultLambdaAddr is where kiln aws-local answers the Lambda Invoke API without
// KILN_LAMBDA_ADDR: the port of `sam local start-lambda`.
const DefaultLambdaAddr = "127.0.0.1:3001"

// awsLocalHandlers are the handlers of the deployment's functions (functions/*), by function
// name, each the one its main hands to lambda.Start: operators and the Step Functions stand-in
// invoke them through the Lambda Invoke API with their real event JSON.
type awsLocalHandlers struct {
	API      http.Handler
	Task     *awsapp.Functions // its task handler
	Ended    *awsapp.Functions // its ended handler (the ended function's own role)
	Deliver  *awsapp.Deliver
	Schedule *awsapp.Schedule
	Admin    *awsapp.Admin
	Live     *awsapp.LiveFunction
}

func (h awsLocalHandlers) byName() map[string]any {
	return map[string]any{
		"api":      httpadapter.NewV2(h.API).ProxyWithContext,
		"task":     h.Task.Task.Handle,
		"ended":    h.Ended.Ended.Handle,
		"deliver":  h.Deliver.Handle,
		"schedule": h.Schedule.Handle,
		"admin":    h.Admin.Handle,
		"live":     h.Live.Handle,
	}
}

// operatorOrGuarded serves the Lambda Invoke API: a call signed with the key of one of the stack's
// roles (the state machine's) is checked against that role's policies by guarded; any other key is
// the operator's, an administrator of the account (aws lambda invoke from a terminal), and is
// served as it is.
func operatorOrGuarded(auth *iam.Authorizer, functions, guarded http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if auth.Principal(iam.KeyID(r)) == nil {
			functions.ServeHTTP(w, r)
			return
		}
		guarded.ServeHTTP(w, r)
	})
}
