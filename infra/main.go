// Command infra is kiln's CDK app: `cdk synth` / `cdk deploy` at the repository root run it (see
// cdk.json); `go run ./infra` there writes the same cloud assembly to cdk.out without the CLI.
// Build the Lambdas first (`make lambdas`); the context value kiln:apiAssetDir overrides where the
// API Lambda's bootstrap is read from (`cdk synth -c kiln:apiAssetDir=...`).
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"

	"github.com/kilnbuild/kiln/infra/stack"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "infra:", err)
		os.Exit(1)
	}
}

func run() error {
	defer jsii.Close()
	props := &awscdk.AppProps{}
	if os.Getenv("CDK_OUTDIR") == "" {
		// Run without the CDK CLI (`go run ./infra`): do what `cdk synth` would.
		ctx, err := stack.CDKContext("cdk.json")
		if err != nil {
			return err
		}
		props.Context = &ctx
		props.Outdir = jsii.String("cdk.out")
	}
	app := awscdk.NewApp(props)
	assetDir := stack.DefaultAPIAssetDir
	if v, ok := app.Node().TryGetContext(jsii.String("kiln:apiAssetDir")).(string); ok && v != "" {
		assetDir = v
	}
	if _, err := os.Stat(filepath.Join(assetDir, "bootstrap")); err != nil {
		return fmt.Errorf("no API Lambda binary in %s (run `make lambdas` first): %w", assetDir, err)
	}
	stack.New(app, "Kiln", stack.Props{
		StackProps: awscdk.StackProps{
			Description: jsii.String("kiln build service"),
		},
		APIAssetDir: assetDir,
	})
	app.Synth(nil)
	return nil
}
