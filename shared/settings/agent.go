package settings

// kiln agent's settings (cmd/kiln: agentloop.go for `kiln agent`, agent.go for `kiln agent run`,
// the build hosts). kiln agent also reads kiln serve's sandbox, Perforce and limit settings
// (the rows of serve.go marked Agent). The Host* and BuildID/TaskToken rows are how the state
// machine's CodeBuild task and kiln's hosted hosts hand a build to `kiln agent run`
// (agentapi.Env*).
var (
	AgentConfig    = Row{"KILN_AGENT_CONFIG", "", "a file of KEY=VALUE lines of kiln agent's settings (--config); the environment wins over it", KindPath, Agent}
	AgentURL       = Row{"KILN_AGENT_URL", "", "the service's base URL (--url)", KindText, Agent}
	AgentToken     = Row{"KILN_AGENT_TOKEN", "", "the agent's token (--token; prefer KILN_AGENT_TOKEN_FILE)", KindText, Agent}
	AgentTokenFile = Row{"KILN_AGENT_TOKEN_FILE", "", "a file holding the agent's token, readable by its owner only; - reads standard input (--token-file)", KindPath, Agent}
	AgentPool      = Row{"KILN_AGENT_POOL", "", "the agent's pool, as created (--pool)", KindText, Agent}
	AgentEngines   = Row{"KILN_AGENT_ENGINES", "./engines", "the engines directory (--engines)", KindPath, Agent}
	AgentPlatforms = Row{"KILN_AGENT_PLATFORMS", "", "comma-separated platforms this machine builds (--platforms; default this machine's)", KindList, Agent}
	AgentWorkdir   = Row{"KILN_AGENT_WORKDIR", "", "workspaces and staging (--workdir; default a temporary directory)", KindPath, Agent}
	AgentEC2       = Row{"KILN_AGENT_EC2", "", "1: run as one of kiln's hosted EC2 hosts (--ec2-host)", KindFlag, Agent}
	// AgentIMDS' default is hostedhosts.DefaultIMDS (cmd/kiln's test checks it).
	AgentIMDS    = Row{"KILN_AGENT_IMDS", "http://169.254.169.254", "the instance metadata service (--imds, with --ec2-host)", KindText, Agent}
	BuildAccount = Row{"KILN_BUILD_ACCOUNT", "kiln-build", "the local account a Windows agent's builds run as (KILN_SANDBOX=account)", KindText, Agent}

	HostURL            = Row{"KILN_HOST_URL", "", "the service's URL a build host reports to (set by the state machine, or the hosted hosts' user data)", KindText, Agent}
	HostCredential     = Row{"KILN_HOST_CREDENTIAL", "", "a build host's per-build credential (set by the state machine)", KindText, Agent}
	HostCredentialFile = Row{"KILN_HOST_CREDENTIAL_FILE", "", "a file holding the build host's credential, in place of KILN_HOST_CREDENTIAL", KindPath, Agent}
	BuildID            = Row{"KILN_BUILD_ID", "", "the build a CodeBuild host runs (set by the state machine)", KindText, Agent}
	TaskToken          = Row{"KILN_TASK_TOKEN", "", "the Step Functions task token of the host's build, if any (set by the state machine)", KindText, Agent}
	HostWorkdir        = Row{"KILN_HOST_WORKDIR", "", "a build host's workspaces and staging (default a temporary directory)", KindPath, Agent}
)

var agentRows = []Row{
	AgentConfig, AgentURL, AgentToken, AgentTokenFile, AgentPool, AgentEngines, AgentPlatforms, AgentWorkdir, AgentEC2,
	AgentIMDS, BuildAccount, HostURL, HostCredential, HostCredentialFile, BuildID, TaskToken, HostWorkdir,
}
