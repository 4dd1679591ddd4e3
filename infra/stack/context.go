package stack

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/kilnbuild/kiln/shared/hostedhosts"
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
	ContextGitHubClientID  = "kiln:githubClientId"
	ContextSignUp          = "kiln:signup" // github or off (default)
	ContextSMTPURL         = "kiln:smtpUrl"
	ContextSMTPFrom        = "kiln:smtpFrom"
	ContextTracing         = "kiln:tracing"

	ContextWindowsAMI          = "kiln:windowsAmiId"
	ContextWindowsInstanceType = "kiln:windowsInstanceType"
	ContextWindowsWarmPool     = "kiln:windowsWarmPoolSize"
	ContextWindowsMaxHosts     = "kiln:windowsMaxHosts"
	ContextWindowsEgressPorts  = "kiln:windowsEgressPorts" // "443,1666" or a JSON array of numbers
	ContextLinuxAMI            = "kiln:linuxAmiId"
	ContextLinuxEngineVersions = "kiln:linuxEngineVersions" // "5.4,5.5" or a JSON array: the engines the Linux AMI holds
	ContextLinuxInstanceType   = "kiln:linuxInstanceType"
	ContextLinuxWarmPool       = "kiln:linuxWarmPoolSize"
	ContextLinuxMaxHosts       = "kiln:linuxMaxHosts"
	ContextLinuxEgressPorts    = "kiln:linuxEgressPorts" // as kiln:windowsEgressPorts
	// ContextEC2IdentityCertsFile is the path of a PEM file holding AWS's "RSA" certificate for
	// instance identity signatures of the deployment's region; required with kiln:windowsAmiId
	// or kiln:linuxAmiId.
	ContextEC2IdentityCertsFile = "kiln:ec2IdentityCertsFile"
)

// imageTag is what an ECR image tag may be.
var imageTag = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)

// amiID is what an EC2 image id looks like; instanceType an EC2 instance type (family.size).
var (
	amiID        = regexp.MustCompile(`^ami-([0-9a-f]{8}|[0-9a-f]{17})$`)
	instanceType = regexp.MustCompile(`^[a-z][a-z0-9-]*\.[a-z0-9]+$`)
)

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
	p.GitHubClientID = str(ContextGitHubClientID)
	switch v := str(ContextSignUp); v {
	case "", "off":
	case "github":
		if p.GitHubAppID == "" || p.GitHubClientID == "" {
			return p, fmt.Errorf("%s: github needs %s and %s (the App's OAuth client; its secret goes in the App's secret as \"clientSecret\")",
				ContextSignUp, ContextGitHubAppID, ContextGitHubClientID)
		}
		p.SignUp = true
	default:
		return p, fmt.Errorf("%s: want github or off, not %q", ContextSignUp, v)
	}
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
	if err := p4FromContext(&p, str); err != nil {
		return p, err
	}
	if err := windowsFromContext(&p, str, get); err != nil {
		return p, err
	}
	if err := linuxFromContext(&p, str, get); err != nil {
		return p, err
	}
	switch v := get(ContextTracing).(type) {
	case bool:
		p.Tracing = v
	case string:
		p.Tracing = v == "true"
	}
	return p, nil
}

// windowsFromContext reads the Windows hosts' settings into p.
func windowsFromContext(p *Props, str func(string) string, get func(string) any) error {
	p.WindowsAMI = str(ContextWindowsAMI)
	if p.WindowsAMI != "" && !amiID.MatchString(p.WindowsAMI) {
		return fmt.Errorf("%s: want an AMI id (ami-0123456789abcdef0): %q", ContextWindowsAMI, p.WindowsAMI)
	}
	if path := str(ContextEC2IdentityCertsFile); path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("%s: %w", ContextEC2IdentityCertsFile, err)
		}
		if _, err := hostedhosts.ParseCertificates(string(b)); err != nil {
			return fmt.Errorf("%s: %s: %w", ContextEC2IdentityCertsFile, path, err)
		}
		p.EC2IdentityCertificates = string(b)
	}
	if p.WindowsAMI != "" && p.EC2IdentityCertificates == "" {
		return fmt.Errorf("%s needs %s: the PEM file of AWS's RSA certificate for instance identity documents of the region (docs/deploy.md)",
			ContextWindowsAMI, ContextEC2IdentityCertsFile)
	}
	p.WindowsInstanceType = str(ContextWindowsInstanceType)
	if p.WindowsInstanceType != "" && !instanceType.MatchString(p.WindowsInstanceType) {
		return fmt.Errorf("%s: want an EC2 instance type (c6i.8xlarge): %q", ContextWindowsInstanceType, p.WindowsInstanceType)
	}
	var err error
	if p.WindowsWarmPoolSize, p.WindowsMaxHosts, err = poolSizes(str, ContextWindowsWarmPool, ContextWindowsMaxHosts,
		DefaultWindowsWarmPoolSize, DefaultWindowsMaxHosts); err != nil {
		return err
	}
	p.WindowsEgressPorts, err = egressPorts(get, ContextWindowsEgressPorts)
	return err
}

// linuxFromContext reads the Linux hosts' settings into p (after windowsFromContext, which
// reads the identity certificate both need).
func linuxFromContext(p *Props, str func(string) string, get func(string) any) error {
	p.LinuxAMI = str(ContextLinuxAMI)
	if p.LinuxAMI != "" && !amiID.MatchString(p.LinuxAMI) {
		return fmt.Errorf("%s: want an AMI id (ami-0123456789abcdef0): %q", ContextLinuxAMI, p.LinuxAMI)
	}
	var versions []string
	switch v := get(ContextLinuxEngineVersions).(type) {
	case nil:
	case string:
		versions = strings.Split(v, ",")
	case []any:
		for _, version := range v {
			s, ok := version.(string)
			if !ok {
				return fmt.Errorf("%s: want engine versions as strings (\"5.4\"): %v", ContextLinuxEngineVersions, version)
			}
			versions = append(versions, s)
		}
	default:
		return fmt.Errorf("%s: want engine versions (5.4,5.5)", ContextLinuxEngineVersions)
	}
	for _, v := range versions {
		if v = strings.TrimSpace(v); !kiln.ValidUEVersion(v) {
			return fmt.Errorf("%s: %q is not an engine version (5.4, 5.4.1)", ContextLinuxEngineVersions, v)
		}
		p.LinuxEngineVersions = append(p.LinuxEngineVersions, v)
	}
	if (p.LinuxAMI == "") != (len(p.LinuxEngineVersions) == 0) {
		return fmt.Errorf("%s and %s go together: the Linux hosts' AMI and the engine versions it holds", ContextLinuxAMI, ContextLinuxEngineVersions)
	}
	if p.LinuxAMI != "" && p.EC2IdentityCertificates == "" {
		return fmt.Errorf("%s needs %s: the PEM file of AWS's RSA certificate for instance identity documents of the region (docs/deploy.md)",
			ContextLinuxAMI, ContextEC2IdentityCertsFile)
	}
	p.LinuxInstanceType = str(ContextLinuxInstanceType)
	if p.LinuxInstanceType != "" && !instanceType.MatchString(p.LinuxInstanceType) {
		return fmt.Errorf("%s: want an EC2 instance type (c6i.8xlarge): %q", ContextLinuxInstanceType, p.LinuxInstanceType)
	}
	var err error
	if p.LinuxWarmPoolSize, p.LinuxMaxHosts, err = poolSizes(str, ContextLinuxWarmPool, ContextLinuxMaxHosts,
		DefaultLinuxWarmPoolSize, DefaultLinuxMaxHosts); err != nil {
		return err
	}
	p.LinuxEgressPorts, err = egressPorts(get, ContextLinuxEgressPorts)
	return err
}

// poolSizes reads a host group's warm pool size and most hosts (0: unset, the defaults apply);
// a pool bigger than the hosts is refused.
func poolSizes(str func(string) string, poolKey, mostKey string, defPool, defMost int) (pool, most int, err error) {
	for key, dst := range map[string]*int{poolKey: &pool, mostKey: &most} {
		if v := str(key); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return 0, 0, fmt.Errorf("%s: want a number, 1 or more: %q", key, v)
			}
			*dst = n
		}
	}
	if p, m := cmp.Or(pool, defPool), cmp.Or(most, defMost); p > m {
		return 0, 0, fmt.Errorf("%s (%d) is more than %s (%d): a bigger pool than hosts is never used", poolKey, p, mostKey, m)
	}
	return pool, most, nil
}

// egressPorts reads a host group's egress ports: "443,1666" or a JSON array of numbers.
func egressPorts(get func(string) any, key string) ([]int, error) {
	var ports []string
	switch v := get(key).(type) {
	case nil:
	case string:
		ports = strings.Split(v, ",")
	case []any:
		for _, port := range v {
			f, ok := port.(float64)
			if !ok {
				return nil, fmt.Errorf("%s: want port numbers: %v", key, port)
			}
			ports = append(ports, strconv.FormatFloat(f, 'f', -1, 64))
		}
	default:
		return nil, fmt.Errorf("%s: want port numbers (443,1666)", key)
	}
	var out []int
	for _, port := range ports {
		n, err := strconv.Atoi(strings.TrimSpace(port))
		if err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("%s: %q is not a TCP port", key, port)
		}
		out = append(out, n)
	}
	return out, nil
}
