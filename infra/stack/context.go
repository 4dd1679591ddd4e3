package stack

import (
	"encoding/json"
	"fmt"
	"os"
)

// CDKContext reads the "context" of a cdk.json (the feature flags), which the CDK CLI hands the
// app. The test and a run without the CLI use it to synthesize what `cdk synth` would.
func CDKContext(path string) (map[string]any, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read CDK context: %w", err)
	}
	var cfg struct {
		Context map[string]any `json:"context"`
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		return nil, fmt.Errorf("read CDK context: %s: %w", path, err)
	}
	return cfg.Context, nil
}
