package settings

import "time"

// kiln serve's own settings: shared/compose/serve's LoadConfig parses each (its parsers need the sandbox and
// the machine, which the Lambdas do not link); `kiln serve -h` and the README's settings table
// show them with the shared ones marked for Serve (app's config_settings_test checks both). Rows
// also read by kiln agent say so: it reads them as kiln serve does.
var (
	Addr          = Row{"KILN_ADDR", "127.0.0.1:8080", "listen address", KindOwn, Serve}
	Data          = Row{"KILN_DATA", "./.kiln", "directory for all state: database, artifacts, logs, workspaces, keys", KindPath, Serve | CLI}
	Engines       = Row{"KILN_ENGINES", "./engines", "directory with one Unreal Engine per version (5.3/Engine/Build/BatchFiles/RunUAT.sh; RunUAT.bat on Windows)", KindPath, Serve | Agent}
	Workers       = Setting[int]{Row{"KILN_WORKERS", "1", "builds run at once on this machine", KindCount, Serve}, ParseCount}
	OrgMaxRunning = Row{"KILN_ORG_MAX_RUNNING", "", "builds of one organization run at once (default: KILN_WORKERS); organizations take turns", KindOwn, Serve}
	AgentWait     = Setting[time.Duration]{Row{"KILN_AGENT_WAIT", "30m", "how long a build for an agent pool (agentPool) waits for an agent of its organization in that pool before it fails", KindDuration, Serve}, ParseDuration("30m")}
	LogMaxLines   = Setting[int]{Row{"KILN_LOG_MAX_LINES", "200000", "lines kept of one build's log; past them a marker line and the rest is dropped", KindCount, Serve}, ParseCount}
	ArtifactMax   = Setting[int64]{Row{"KILN_ARTIFACT_MAX", "50GiB", "largest artifact (50GiB, 500MiB or bytes); a build whose package is larger fails", KindSize, Serve}, ParseSize}

	GitHubAppKey        = Row{"KILN_GITHUB_APP_KEY", "", "path of the GitHub App's private key (PEM)", KindPath, Serve}
	GitHubWebhookSecret = Row{"KILN_GITHUB_WEBHOOK_SECRET", "", "secret of GitHub webhook signatures (prefer the environment to the flag)", KindText, Serve}
	GitHubClientSecret  = Row{"KILN_GITHUB_CLIENT_SECRET", "", "the GitHub App's OAuth client secret (prefer the environment to the flag)", KindText, Serve}
	P4                  = Row{"KILN_P4", "p4", "the Perforce command-line client", KindPath, Serve | Agent}

	Sandbox             = Row{"KILN_SANDBOX", "bwrap", "how builds are confined: bwrap (each build in a bubblewrap sandbox) or off (one trusted studio only)", KindOwn, Serve | Agent}
	SandboxOffConfirmed = Row{"KILN_SANDBOX_OFF_I_TRUST_EVERY_ORGANIZATION", "0", "1 lets builds run without a sandbox (KILN_SANDBOX=off) although the service holds several organizations", KindFlag, Serve}
	Bwrap               = Row{"KILN_BWRAP", "bwrap", "the bubblewrap binary", KindPath, Serve | Agent}
	SandboxNetwork      = Row{"KILN_SANDBOX_NETWORK", "none", "the network of sandboxed builds: none (only their own loopback) or host (the host's network, " +
		"kiln's API, loopback services and a cloud's metadata service included); off and on are older spellings of none and host", KindOwn, Serve | Agent}
	// BuildUIDs' default is sandbox.DefaultUIDs (app's config_settings_test checks it).
	BuildUIDs = Row{"KILN_BUILD_UIDS", "200000-200999", "when kiln runs as root: the host uids builds run as, FIRST-LAST, one per running build " +
		"(never root, nobody or kiln's own uid; uids nobody else on the host uses)", KindOwn, Serve}
	SandboxReadOnly = Row{"KILN_SANDBOX_READONLY", "", "comma-separated host directories builds also see read-only (SDKs outside the engine, e.g. /opt/android-sdk)", KindList, Serve | Agent}
	SandboxEnv      = Row{"KILN_SANDBOX_ENV", "", "comma-separated names of environment variables passed to builds (e.g. ANDROID_HOME,JAVA_HOME)", KindList, Serve | Agent}

	// The limits of one build (app's config_limits.go), read by kiln agent too (app.OpenAgentLimits).
	BuildMemory    = Row{"KILN_BUILD_MEMORY", "auto", "memory one build may use (e.g. 8GiB, 512MiB or bytes); past it the build is stopped and fails; auto: 90% of the machine's memory divided by KILN_WORKERS; off: no limit", KindOwn, Serve | Agent}
	BuildPids      = Row{"KILN_BUILD_PIDS", "auto", "processes and threads one build may run at once; auto: 256 per CPU core, at least 1024; off: no limit", KindOwn, Serve | Agent}
	BuildCPUWeight = Row{"KILN_BUILD_CPU_WEIGHT", "100", "each build's share of the CPU against the other builds (cgroup cpu.weight, 1 to 10000)", KindOwn, Serve | Agent}
	DiskReserve    = Row{"KILN_DISK_RESERVE", "5%", "free space kept on KILN_DATA's volume (a size such as 20GiB, or a percentage of the volume); a build does not start, or is stopped, when less is free; 0: no reserve", KindOwn, Serve | Agent}
)

var serveRows = []Row{
	Addr, Data, Engines, Workers.Row, OrgMaxRunning, AgentWait.Row, LogMaxLines.Row, ArtifactMax.Row, GitHubAppKey, GitHubWebhookSecret,
	GitHubClientSecret, P4, Sandbox, SandboxOffConfirmed, Bwrap, SandboxNetwork, BuildUIDs, SandboxReadOnly, SandboxEnv,
	BuildMemory, BuildPids, BuildCPUWeight, DiskReserve,
}
