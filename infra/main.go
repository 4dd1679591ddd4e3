// Command infra is kiln's CDK app: `cdk synth` / `cdk deploy` at the repository root run it (see
// cdk.json); `go run ./infra` there writes the same cloud assembly to cdk.out without the CLI.
// Build the Lambdas first (`make lambdas`). Settings come from the context (`-c key=value`, see
// stack.PropsFromContext and docs/deploy.md); buildspec/buildspec.yml, when present, is the build
// hosts' buildspec.
package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"

	"github.com/kilnbuild/kiln/infra/stack"
)

// buildspecFile is the hosts' buildspec, relative to the repository root.
const buildspecFile = "buildspec/buildspec.yml"

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "infra:", err)
		os.Exit(1)
	}
}

func run() error {
	defer jsii.Close()
	appProps := &awscdk.AppProps{}
	if os.Getenv("CDK_OUTDIR") == "" {
		// Run without the CDK CLI (`go run ./infra`): do what `cdk synth` would.
		ctx, err := stack.CDKContext("cdk.json")
		if err != nil {
			return err
		}
		appProps.Context = &ctx
		appProps.Outdir = jsii.String("cdk.out")
	}
	app := awscdk.NewApp(appProps)
	props, err := stack.PropsFromContext(func(key string) any { return app.Node().TryGetContext(jsii.String(key)) })
	if err != nil {
		return err
	}
	root := props.LambdaAssetRoot
	if root == "" {
		root = stack.DefaultLambdaAssetRoot
	}
	for _, name := range stack.Functions {
		if _, err := os.Stat(filepath.Join(root, name, "bootstrap")); err != nil {
			return fmt.Errorf("no %s Lambda binary in %s (run `make lambdas` first): %w", name, filepath.Join(root, name), err)
		}
	}
	switch b, err := os.ReadFile(buildspecFile); {
	case err == nil:
		props.Buildspec = string(b)
	case !errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("read the hosts' buildspec: %w", err)
	}
	props.StackProps = awscdk.StackProps{Description: jsii.String("kiln build service")}
	stack.New(app, "Kiln", props)
	app.Synth(nil)
	return nil
}
