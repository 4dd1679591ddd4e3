package stack

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strconv"

	"github.com/kilnbuild/kiln/shared/kiln"
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

// Context keys the app reads (`cdk synth -c key=value`, or "context" in cdk.json).
const (
	ContextLambdaAssetRoot = "kiln:lambdaAssetRoot"
	ContextHostRepository  = "kiln:hostRepository"
	ContextHostImages      = "kiln:hostImages" // JSON object: engine version → image tag
	ContextRetentionDays   = "kiln:artifactRetentionDays"
	ContextPublicURL       = "kiln:publicUrl"
	ContextGitHubAppID     = "kiln:githubAppId"
	ContextGitHubAppSlug   = "kiln:githubAppSlug"
	ContextSMTPURL         = "kiln:smtpUrl"
	ContextSMTPFrom        = "kiln:smtpFrom"
	ContextTracing         = "kiln:tracing"
)

// imageTag is what an ECR image tag may be.
var imageTag = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)

// PropsFromContext reads the stack's settings from the app's context (get returns nil for an
// unset key). Values given with -c arrive as strings; those in cdk.json keep their JSON type.
func PropsFromContext(get func(key string) any) (Props, error) {
	var p Props
	str := func(key string) string {
		switch v := get(key).(type) {
		case string:
			return v
		case float64:
			return strconv.FormatFloat(v, 'f', -1, 64)
		}
		return ""
	}
	p.LambdaAssetRoot = str(ContextLambdaAssetRoot)
	p.HostRepository = str(ContextHostRepository)
	p.PublicURL = str(ContextPublicURL)
	p.GitHubAppID = str(ContextGitHubAppID)
	p.GitHubAppSlug = str(ContextGitHubAppSlug)
	p.SMTPURL = str(ContextSMTPURL)
	p.SMTPFrom = str(ContextSMTPFrom)
	switch v := get(ContextHostImages).(type) {
	case nil:
	case string:
		if err := json.Unmarshal([]byte(v), &p.HostImages); err != nil {
			return p, fmt.Errorf("%s: want a JSON object of engine version to image tag: %w", ContextHostImages, err)
		}
	case map[string]any:
		p.HostImages = map[string]string{}
		for k, tag := range v {
			s, ok := tag.(string)
			if !ok {
				return p, fmt.Errorf("%s: the tag of %q is not a string", ContextHostImages, k)
			}
			p.HostImages[k] = s
		}
	default:
		return p, fmt.Errorf("%s: want a JSON object of engine version to image tag", ContextHostImages)
	}
	for version, tag := range p.HostImages {
		if !kiln.ValidUEVersion(version) || !imageTag.MatchString(tag) {
			return p, fmt.Errorf("%s: %q: %q is not an engine version with an image tag", ContextHostImages, version, tag)
		}
	}
	if v := str(ContextRetentionDays); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return p, fmt.Errorf("%s: want a number of days, 1 or more: %q", ContextRetentionDays, v)
		}
		p.ArtifactRetentionDays = n
	}
	switch v := get(ContextTracing).(type) {
	case bool:
		p.Tracing = v
	case string:
		p.Tracing = v == "true"
	}
	return p, nil
}
