// Command hello is the smallest Go Lambda: the cold start benchmark's baseline.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"
)

func main() {
	lambda.Start(func(ctx context.Context, in map[string]any) (map[string]any, error) { return in, nil })
}
