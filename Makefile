# kiln — see README.md. `make run` starts the service on this machine; `make test` runs every test.
SHELL := /bin/bash
GO ?= go
BIN := bin
LAMBDAS := $(notdir $(patsubst %/main.go,%,$(wildcard functions/*/main.go)))
# The CDK CLI, through npx (never a bare `aws-cdk`); Node 20 needs the jsii warning silenced.
CDK := JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=20 CDK_DISABLE_CLI_TELEMETRY=true npx --yes aws-cdk@2

.PHONY: run demo test test-short bench build windows lambdas synth deps fake-github fmt vet clean

## run: build and start `kiln serve` with the defaults (state in ./.kiln, API on 127.0.0.1:8080)
run: build
	@scripts/install-bubblewrap.sh || true # without it kiln serve starts, and says why builds fail
	$(BIN)/kiln serve

## demo: try everything on this machine: a fake GitHub (127.0.0.1:$$KILN_DEMO_GITHUB_PORT, default
## 9091), the stand-in engine and `kiln serve` (127.0.0.1:$$KILN_DEMO_PORT, default 8090) with its own
## data in $$KILN_DEMO_DIR/$$KILN_DEMO_PORT (default .demo/8090; a demo on a port whose demo still runs is
## refused); prints the owner token and the curl steps to a verified artifact. Ctrl-C stops it
## (the script then exits 0, so make reports no error). KILN_DEMO_SIGNUP=1: sign-up in the console
## instead (Sign in with GitHub, create an organization, link GitHub on the fake's install page).
demo:
	@scripts/demo.sh

## test: every test, including the store contract suite on SQLite and on DynamoDB Local, and
## go vet for Linux and for Windows (kiln agent runs there). Packages run side by side (the
## end-to-end tests of shared/compose/e2e/* are a package per feature, their tests in parallel); it
## prints each package's time as it ends, then the 20 slowest tests (the whole record is
## .cache/test.json), then checks that the end-to-end packages together exercised every
## operation of the OpenAPI document.
TEST_P ?= 3
TEST_PARALLEL ?= 4
GOTESTSUM := .cache/bin/gotestsum
test: deps
	$(GO) vet ./...
	GOOS=windows GOARCH=amd64 $(GO) vet ./...
	@rm -rf .cache/openapi-coverage
	KILN_TEST_OPENAPI_COVERAGE=$(CURDIR)/.cache/openapi-coverage $(GOTESTSUM) --format pkgname-and-test-fails \
		--jsonfile .cache/test.json -- -count=1 -timeout 45m -p $(TEST_P) -parallel $(TEST_PARALLEL) ./...
	@echo "The 20 slowest tests:"
	@$(GOTESTSUM) tool slowest --jsonfile .cache/test.json --num 20 --threshold 1s
	$(GO) run ./shared/httpapi/openapi/openapitest/uncovered .cache/openapi-coverage

## test-short: the tests without installing anything first
test-short:
	$(GO) test ./...

## bench: benchmarks, each printing its figures beside a baseline measured in the same run:
## GET /builds vs a bare handler (1k and 100k builds), trigger → running, a 1 GB download vs a
## disk read, packaging a 1.5 GB staged build vs tar -czf and pigz (needs ~3 GB of disk), the
## size manifest's cost to packaging (a ratio, on a smaller tree), a 2 GiB upload to MinIO vs
## MinIO's client mc putting the same file (needs ~4 GB of disk), and agents: trigger → running
## with an idle agent vs a claim of a pending build, claims/s of 100 agents polling vs a bare handler,
## a trigger with plan checks vs without (the checks' p99 < 1 ms), what a build costs the AWS control
## plane on kiln aws-local ($ per build at us-east-1 prices, goal < $0.005, and the costliest principal's share),
## and the web console in headless Chromium (bytes transferred and time to the first build list of a
## 1k-build organization) vs GET /builds alone, and build caches: saving and restoring a 256 MiB tree vs
## tar | zstd -T0 -3 and zstd -d | tar -x (needs zstd), and the peak RSS of restoring 2 GiB (needs ~4 GB of disk),
## and saving and restoring 256 MiB through the no-symlink directory (package nofollow) vs the path walk it replaced,
## and warm builds: the second build of a branch, and a new branch's first, vs the first (cold) on kiln serve and
## kiln aws-local (goal <= 0.2 each),
## and the console's log viewer on a 200,000-line log (first rows, every line, search) vs its raw text in a <pre>
bench:
	@scripts/install-minio.sh mc >/dev/null
	KILN_BENCH_DOWNLOAD=1 KILN_BENCH_DELIVERY=1 KILN_BENCH_S3=1 KILN_BENCH_CACHE=1 $(GO) test -run '^$$' -bench . -benchmem $$($(GO) list ./... | grep -v /shared/packaging)
	scripts/bench-packaging.sh

## build: the kiln binary, and the Lambda binaries (Linux arm64)
build:
	$(GO) build -o $(BIN)/kiln ./cmd/kiln

## windows: kiln for Windows build machines (kiln agent), as bin/kiln.exe (docs/agents.md)
windows:
	GOOS=windows GOARCH=amd64 CGO_ENABLED=0 $(GO) build -o $(BIN)/kiln.exe ./cmd/kiln

## lambdas: every function in functions/ as bin/lambda/<name>/bootstrap (Linux arm64, provided.al2023)
lambdas:
	@for fn in $(LAMBDAS); do \
		echo "build functions/$$fn"; \
		GOOS=linux GOARCH=arm64 CGO_ENABLED=0 $(GO) build -tags lambda.norpc -ldflags "-s -w" -o $(BIN)/lambda/$$fn/bootstrap ./functions/$$fn || exit 1; \
	done

## synth: the AWS deployment's CloudFormation template in cdk.out/ (offline: no AWS account needed);
## settings with CDK_ARGS, e.g. CDK_ARGS="-c kiln:hostImages='{\"5.4\":\"ue-5.4\"}'" (docs/deploy.md)
synth: lambdas
	$(CDK) synth --no-notices --no-version-reporting --quiet $(CDK_ARGS)

## fake-github: a fake GitHub App (the tests' one) to try kiln without a real App; prints the settings
fake-github:
	$(GO) run ./cmd/fakegithub

## deps: what the tests need beyond Go modules (DynamoDB Local, MinIO, aws-local-stepfunctions, axe-core and socket.io-client, cached in .cache/; bubblewrap; chromium)
deps:
	@scripts/install-bubblewrap.sh
	@scripts/install-chromium.sh
	@scripts/install-dynamodb-local.sh >/dev/null
	@scripts/install-minio.sh >/dev/null
	@scripts/install-stepfunctions-local.sh >/dev/null
	@scripts/install-axe-core.sh >/dev/null
	@scripts/install-socketio-client.sh >/dev/null
	@test -x .cache/bin/gotestsum || GOBIN=$(CURDIR)/.cache/bin $(GO) install gotest.tools/gotestsum@v1.13.0

fmt:
	gofmt -w $$(git ls-files '*.go')

vet:
	$(GO) vet ./...
	GOOS=windows GOARCH=amd64 $(GO) vet ./...

clean:
	rm -rf $(BIN) cdk.out .demo
