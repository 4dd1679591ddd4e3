package main

import (
	"testing"

	"github.com/kilnbuild/kiln/shared/agentapi"
	"github.com/kilnbuild/kiln/shared/awslocal/lifeline"
	"github.com/kilnbuild/kiln/shared/compose/awslocalapp"
	"github.com/kilnbuild/kiln/shared/hostedhosts"
	"github.com/kilnbuild/kiln/shared/sandbox"
	"github.com/kilnbuild/kiln/shared/settings"
)

// TestRegistryMatchesThePackages: the registry writes out defaults and names the packages
// define as constants (it links none of them: the Lambdas import it); they stay the same.
func TestRegistryMatchesThePackages(t *testing.T) {
	for _, tc := range []struct {
		what, registry, pkg string
	}{
		{"KILN_AGENT_IMDS default", settings.AgentIMDS.Default, hostedhosts.DefaultIMDS},
		{"KILN_LAMBDA_ADDR default", settings.LambdaAddr.Default, awslocalapp.DefaultLambdaAddr},
		{"KILN_BUILD_ACCOUNT default", settings.BuildAccount.Default, sandbox.DefaultBuildAccount},
		{"agentapi.EnvHostURL", settings.HostURL.Name, agentapi.EnvHostURL},
		{"agentapi.EnvHostCredential", settings.HostCredential.Name, agentapi.EnvHostCredential},
		{"agentapi.EnvBuildID", settings.BuildID.Name, agentapi.EnvBuildID},
		{"agentapi.EnvTaskToken", settings.TaskToken.Name, agentapi.EnvTaskToken},
		{"lifeline.MarkerVar", settings.AWSLocalLifeline.Name, lifeline.MarkerVar},
	} {
		if tc.registry != tc.pkg {
			t.Errorf("%s: the registry's %q, the package's %q", tc.what, tc.registry, tc.pkg)
		}
	}
}
