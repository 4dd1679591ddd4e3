package settings

// TestOnly are the KILN_* variables no kiln program reads: those only tests and benchmarks read
// (*_test.go), and those of the scripts beside the Go code (make demo's scripts/demo.sh, the
// Perforce submit trigger scripts/perforce/kiln-submit-trigger.sh). Listed so that every KILN_
// name of the repository is a row somewhere; the literal check of scan_test.go does not read
// test files, so a test's own variable needs no row to build, but belongs here.
var TestOnly = []Row{
	{"KILN_BENCH_CACHE", "", "1: run the build cache benchmarks (shared/buildcache)", KindFlag, Test},
	{"KILN_BENCH_DELIVERY", "", "1: run the auto-deploy benchmark (shared/builds)", KindFlag, Test},
	{"KILN_BENCH_DOWNLOAD", "", "1: run the 1 GB download benchmark (shared/compose/serve)", KindFlag, Test},
	{"KILN_BENCH_PACKAGING", "", "1: run the packaging benchmark (shared/packaging)", KindFlag, Test},
	{"KILN_BENCH_S3", "", "1: run the 2 GiB MinIO upload benchmark (shared/artifacts/s3artifacts)", KindFlag, Test},
	{"KILN_BUILDCACHE_RESTORE_CHILD", "", "the restore benchmark's child process (shared/buildcache)", KindText, Test},
	{"KILN_BUILDCACHE_RESTORE_ROOT", "", "the restore benchmark child's directory (shared/buildcache)", KindPath, Test},
	{"KILN_CGROUP_TEST_ALLOC_MIB", "", "the cgroup tests' helper: MiB to allocate (shared/sandbox/cgroup)", KindText, Test},
	{"KILN_DELIVERY_HELPER", "", "the delivery benchmark's helper process (shared/delivery)", KindText, Test},
	{"KILN_PACKAGING_HELPER", "", "the packaging benchmark's helper process (shared/packaging)", KindText, Test},
	{"KILN_INFRA_TEMPLATE_OUT", "", "a file the stack test writes the synthesized template to (infra/stack)", KindPath, Test},
	TestChromium,
	TestStackTemplate,
	TestOpenAPICoverage,
	{"KILN_TEST_HOST", "", "the Step Functions stand-in's test host process (shared/awslocal/stepfunctions)", KindFlag, Test},
	{"KILN_TEST_DB", "", "that test host's database", KindPath, Test},
	{"KILN_TEST_MODES", "", "that test host's directory of per-build modes", KindPath, Test},
	{"KILN_TEST_BEAT_EVERY", "", "that test host's heartbeat interval", KindText, Test},
	{"KILN_TEST_BEAT_FOR", "", "how long that test host heartbeats", KindText, Test},

	{"KILN_DEMO_DIR", ".demo", "make demo: where it keeps its binaries, data, engine and logs (scripts/demo.sh)", KindPath, Test},
	{"KILN_DEMO_PORT", "8090", "make demo: kiln's port on 127.0.0.1", KindText, Test},
	{"KILN_DEMO_GITHUB_PORT", "9091", "make demo: the fake GitHub's port on 127.0.0.1", KindText, Test},
	{"KILN_DEMO_SIGNUP", "", "1: make demo tries sign-up in the web console (KILN_SIGNUP=github)", KindFlag, Test},
	{"KILN_TRIGGER_CONFIG", "", "the Perforce submit trigger's configuration file (scripts/perforce/kiln-submit-trigger.sh)", KindPath, Test},
	{"KILN_TRIGGER_TOKEN_FILE", "", "the Perforce submit trigger's token file", KindPath, Test},
}

// The rows of the end-to-end tests' harness (shared/compose/e2e), which is not a test file.
var (
	TestChromium        = Row{"KILN_TEST_CHROMIUM", "", "the chromium of the console's browser tests (shared/compose/e2e)", KindPath, Test}
	TestStackTemplate   = Row{"KILN_TEST_STACK_TEMPLATE", "", "the stack template of the aws-local tests (default synthesized)", KindPath, Test}
	TestOpenAPICoverage = Row{"KILN_TEST_OPENAPI_COVERAGE", "", "where each end-to-end test package records the API operations it exercised; make test then checks their union", KindPath, Test}
)
