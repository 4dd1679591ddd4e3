package stack

import (
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"

	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"
)

// ContextP4 names the Linux arm64 `p4` command-line client the operator supplies at synth
// (docs/deploy.md): the stack ships it to the functions that check Perforce as a Lambda layer.
const ContextP4 = "kiln:p4"

// LayerP4Path is where the p4 layer puts the client in a function: layers are extracted under
// /opt, and the layer's bin/p4 is /opt/bin/p4. The functions get it as KILN_P4.
const LayerP4Path = "/opt/bin/p4"

// PerforceFunctions are the functions that check Perforce: the API verifies a project's Perforce
// server and credentials when they are saved (without a client it answers 503).
var PerforceFunctions = []string{"api"}

// p4FromContext reads kiln:p4: the file must be a Linux arm64 executable (what the functions
// run on), else synth fails and nothing is deployed.
func p4FromContext(p *Props, str func(string) string) error {
	path := str(ContextP4)
	if path == "" {
		return nil
	}
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("%s: %s is not a Linux executable: %w", ContextP4, path, err)
	}
	defer f.Close()
	if f.Machine != elf.EM_AARCH64 {
		return fmt.Errorf("%s: %s is built for %s, the functions run on Linux arm64 (aarch64)", ContextP4, path, f.Machine)
	}
	p.P4File = path
	return nil
}

// addP4Layer ships Props.P4File as a layer (bin/p4) to the functions that check Perforce, with
// KILN_P4 naming it. Without a client they get neither: Perforce checks answer 503.
func (s *KilnStack) addP4Layer() {
	if s.props.P4File == "" {
		return
	}
	b, err := os.ReadFile(s.props.P4File)
	if err != nil {
		panic(fmt.Sprintf("stack: read the p4 client %s: %v", s.props.P4File, err)) // checked by PropsFromContext
	}
	// The layer's content: bin/p4, executable. A directory of its own, made for the synth.
	dir, err := os.MkdirTemp("", "kiln-p4-layer-")
	if err != nil {
		panic(fmt.Sprintf("stack: p4 layer: %v", err))
	}
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		panic(fmt.Sprintf("stack: p4 layer: %v", err))
	}
	if err := os.WriteFile(filepath.Join(dir, "bin", "p4"), b, 0o755); err != nil {
		panic(fmt.Sprintf("stack: p4 layer: %v", err))
	}
	layer := awslambda.NewLayerVersion(s.Stack, jsii.String("P4Layer"), &awslambda.LayerVersionProps{
		Description:             jsii.String("kiln: the Perforce command-line client (" + LayerP4Path + ")"),
		Code:                    awslambda.Code_FromAsset(jsii.String(dir), nil),
		CompatibleArchitectures: &[]awslambda.Architecture{awslambda.Architecture_ARM_64()},
		CompatibleRuntimes:      &[]awslambda.Runtime{awslambda.Runtime_PROVIDED_AL2023()},
	})
	for _, name := range PerforceFunctions {
		f := s.functions[name]
		f.fn.AddLayers(layer)
		f.fn.AddEnvironment(jsii.String("KILN_P4"), jsii.String(LayerP4Path), nil)
	}
}
