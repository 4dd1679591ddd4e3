// Command admin is the admin Lambda, invoked by operators (aws lambda invoke, or the console with
// a sample from events/): bootstrap the first organization and its owner, add a member, or issue
// a lost token, as `kiln admin` does on one machine. It answers the JSON `kiln admin` prints.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/kilnbuild/kiln/shared/app/awsapp"
)

func main() {
	logger := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	a, err := awsapp.NewDynamoAdmin(context.Background(), os.Getenv("KILN_DYNAMODB_TABLE"))
	if err != nil {
		logger.Error("start", slog.String("error", err.Error()))
		os.Exit(1)
	}
	lambda.Start(a.Handle)
}
