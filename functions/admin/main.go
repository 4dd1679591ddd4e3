// Command admin is the admin Lambda, invoked by operators (aws lambda invoke, or the console with
// a sample from events/): bootstrap the first organization and its owner, add a member, or issue
// a lost token, as `kiln admin` does on one machine. It answers the JSON `kiln admin` prints.
package main

import (
	"context"
	"log/slog"

	"github.com/kilnbuild/kiln/shared/compose/awsapp"
	"github.com/kilnbuild/kiln/shared/settings"
)

func main() {
	table := func(getenv func(string) string) (string, error) { return settings.DynamoDBTable.Get(getenv), nil }
	awsapp.StartLambda(table, func(ctx context.Context, table string, _ *slog.Logger) (any, error) {
		a, err := awsapp.NewDynamoAdmin(ctx, table)
		if err != nil {
			return nil, err
		}
		return a.Handle, nil
	})
}
