# The Makefile is the one entry point; CI (.ci/run) calls `make test`.
SHELL     := /bin/bash
GO        ?= go
PKGS      ?= ./...
BIN       ?= bin
# The tool versions CI pins live in one place (STATICCHECK_VERSION, GOVULNCHECK_VERSION, ...);
# the Go tools are fetched from the Go module proxy at exactly those versions.
include tools/versions.env
LDFLAGS   := -s -w -buildid=
SEEDS     ?= 10000

.PHONY: all test lint bench bench-class demo build soak fuzz clean cross act workflow-parser openapi check workflow-lint vulncheck verify-pins

all: lint test

## test: GitHub's parser on every workflow; GitHub's API description (make openapi); make cross (compile every package for the six
## targets and vet them, which covers go vet of the host); act for the act harness; the whole
## suite with the race detector, shuffled, uncached (the release path and the release workflow
## under act included); then the simulation's 1,000-seed CI tier and the planted-bug proof
## (both without -race).
test:
	$(MAKE) --no-print-directory workflow-parser
	$(MAKE) --no-print-directory openapi
	$(MAKE) --no-print-directory cross
	$(MAKE) --no-print-directory act
	BUILD_LOCK_ACT=$(ACT_BIN) $(GO) test -race -shuffle=on -count=1 -timeout 30m $(PKGS)
	$(MAKE) --no-print-directory sim-ci
	CGO_ENABLED=0 $(GO) test -trimpath -count=1 -tags plantedbugs -run '^TestPlantedBugs' ./internal/sim ./internal/store
	$(MAKE) --no-print-directory verify-pins

## lint: gofmt, go mod tidy diff, go vet, staticcheck (pinned).
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) mod tidy -diff
	$(GO) vet $(PKGS)
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) $(PKGS)

## bench: the named workloads (idle, burst, steady, crash, wait-1h) in virtual time through the
## real actions (GitHub's replica lag and branch-head conflicts on), the four-locks burst (4 locks
## on one lock-state branch bursting together: failed jobs, conflicts per admission), the seats workload
## (named seats, two labels, two priority classes: waits per class, max overtaken, affinity), the machine-queue
## overhead (file operations and wall time per acquire with machine-slots, real files), then the demo row and the queue-size scale table (counts and ratios, not timings),
## then `buildlock history verify` of 1,000 and 10,000 commits (requests and wall time).
## BENCH_JSON=1 prints JSON instead; BENCH_OUT=file also writes the workload JSON to file.
bench:
	BENCH_JSON=$(BENCH_JSON) BENCH_OUT=$(BENCH_OUT) $(GO) test -count=1 -timeout 10m -run '^TestWorkloads$$' -v ./internal/bench
	@set -o pipefail; BENCH_JSON=$(BENCH_JSON) $(GO) test -count=1 -timeout 10m -run '^TestMultiLockBurst$$' -v ./internal/bench | grep -v -e '^=== ' -e '^--- ' -e '^PASS$$'
	@set -o pipefail; BENCH_JSON=$(BENCH_JSON) $(GO) test -count=1 -timeout 10m -run '^TestSeatsWorkload$$' -v ./internal/bench | grep -v -e '^=== ' -e '^--- ' -e '^PASS$$'
	@set -o pipefail; BENCH_JSON=$(BENCH_JSON) $(GO) test -count=1 -timeout 10m -run '^TestMachineQueueOverhead$$' -v ./internal/bench | grep -v -e '^=== ' -e '^--- ' -e '^PASS$$'
	$(GO) run ./cmd/buildlock bench $(if $(filter 1,$(BENCH_JSON)),--json)
	@set -o pipefail; BENCH_JSON=$(BENCH_JSON) $(GO) test -count=1 -timeout 10m -run '^TestHistoryVerifyScale$$' -v ./internal/bench | grep -v -e '^=== '

## bench-class: the class sweep (docs/performance.md §27): the tail targets over 80-job bursts at five
## arrival spacings on 1, 2, 4 and 8 seats, 10-job bursts on 1 and 2 seats and 20-job bursts on a lock at a
## quarter of the App, one row each (reported, not asserted; about three minutes).
## BURST=80x2@200ms,40x4@1s/30s,20x2@2s:0.25 runs those cells instead (JOBSxSEATS@SPACING[/HOLD][:SHARE]); CELL_SEEDS (default 4) sets the seeds per cell;
## BREAKDOWN=1 adds where each cell's state writes and secondary-limit answers went (§29).
bench-class:
	@set -o pipefail; $(GO) test -count=1 -timeout 30m -run '^TestWorkloads$$' -v ./internal/bench -args $(if $(BURST),-burst '$(BURST)',-class) -cell-seeds $(or $(CELL_SEEDS),4) $(if $(filter 1,$(BREAKDOWN)),-breakdown) | grep -v -e '^=== ' -e '^--- ' -e '^PASS$$'

## demo: the main job on the embedded GitHub emulator.
demo:
	$(GO) run ./cmd/buildlock demo

## build: reproducible static binaries for every command.
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN)/ ./cmd/...

## cross: compile every package for the six release targets (linux/darwin/windows ×
## amd64/arm64) with the release build's flags, so build-tagged OS code compiles everywhere, and
## vet them: every package once per OS, the other architecture where it can differ
## (tools/cross; run by make test). The compiled packages are the ones make dist links.
CROSS_TARGETS ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64
cross:
	$(GO) run ./tools/cross -go $(GO) -targets "$(CROSS_TARGETS)" $(PKGS)

## act: nektos/act at ACT_VERSION (tools/versions.env) for the act harness (internal/acttest),
## installed from the Go module proxy into .cache/ (run by make test).
ACT_BIN := $(CURDIR)/.cache/tools/act-$(ACT_VERSION)/act
act: $(ACT_BIN)
$(ACT_BIN):
	GOBIN=$(dir $(ACT_BIN)) $(GO) install github.com/nektos/act@$(ACT_VERSION)

clean:
	rm -rf $(BIN)

# ---- GitHub's parser (tools/workflow-parser) ---------------------------------
WORKFLOW_PARSER := tools/workflow-parser

## workflow-parser: load every .github/actions/*/action.yml, .github/workflows/*.yml,
## docs/examples/*.yml and the README's consumer workflow with GitHub's own parser
## (@actions/workflow-parser, pinned), then the check's own tests (run by make test).
## Needs Node 20+ and npm; npm ci installs the committed package-lock.json.
workflow-parser: $(WORKFLOW_PARSER)/node_modules/.package-lock.json
	node $(WORKFLOW_PARSER)/check.mjs
	cd $(WORKFLOW_PARSER) && node --test check.test.mjs

# npm ci again whenever the manifest or the lock file changes (npm writes
# node_modules/.package-lock.json on every install).
$(WORKFLOW_PARSER)/node_modules/.package-lock.json: $(WORKFLOW_PARSER)/package.json $(WORKFLOW_PARSER)/package-lock.json
	@command -v node >/dev/null && command -v npm >/dev/null || { echo "workflow-parser: needs Node.js 20+ and npm on PATH"; exit 1; }
	@node -e 'if (+process.versions.node.split(".")[0] < 20) { console.error("workflow-parser: needs Node.js 20+, found " + process.version); process.exit(1) }'
	cd $(WORKFLOW_PARSER) && npm ci --no-audit --no-fund

# ---- GitHub's API description (tools/openapi) ---------------------------------
OPENAPI := tools/openapi

## openapi: install GitHub's REST API description (@octokit/openapi) and recorded real GitHub
## interactions (@octokit/fixtures), pinned by tools/openapi/package-lock.json; the Go tests
## (internal/emulator/openapi, the action and end-to-end tests) check every exchange against them.
openapi: $(OPENAPI)/node_modules/.package-lock.json

$(OPENAPI)/node_modules/.package-lock.json: $(OPENAPI)/package.json $(OPENAPI)/package-lock.json
	@command -v npm >/dev/null || { echo "openapi: needs npm on PATH"; exit 1; }
	cd $(OPENAPI) && npm ci --no-audit --no-fund --ignore-scripts

## check: the CI-equivalent local check (.devcontainer/scripts/verify.sh runs it): lint, test (which
## runs cross), the workflow lints and govulncheck.
check:
	$(MAKE) --no-print-directory lint
	$(MAKE) --no-print-directory test
	$(MAKE) --no-print-directory workflow-lint
	$(MAKE) --no-print-directory vulncheck

## workflow-lint: actionlint (the go.mod version) with shellcheck from the OS packages (exactly
## SHELLCHECK_VERSION) on every workflow, docs/examples included, and shellcheck on the shell scripts.
## WORKFLOW SECURITY CHECKS: the policy analyzer (issue 15) is added here once it lands.
SHELL_SCRIPTS = $(shell git ls-files '*.sh')
workflow-lint:
	@v=$$(shellcheck --version 2>/dev/null | sed -n 's/^version: //p'); \
	if [ "$$v" != "$(SHELLCHECK_VERSION)" ]; then \
		echo "workflow-lint: shellcheck $(SHELLCHECK_VERSION) is required (tools/versions.env), found '$$v'; install the OS package shellcheck"; exit 1; fi
	$(GO) run github.com/rhysd/actionlint/cmd/actionlint -shellcheck=shellcheck .github/workflows/*.yml docs/examples/*.yml
	shellcheck -x -S warning $(SHELL_SCRIPTS)

## vulncheck: govulncheck (golang.org/x/vuln at GOVULNCHECK_VERSION) over every package.
vulncheck:
	$(GO) run golang.org/x/vuln/cmd/govulncheck@$(GOVULNCHECK_VERSION) ./...

## verify-pins: the dry run of .devcontainer/scripts/verify.sh: every tool make check calls is pinned
## the same in tools/versions.env, go.mod, the workflows and the devcontainer (run by make test).
verify-pins:
	@bash .devcontainer/scripts/verify.sh --dry-run

# ---- packaging (docs/packaging.md); not part of `make test` -------------------
DIST      ?= dist
# The one release list: every cmd/<name> minus internal/releaseset.Excluded
# (documented there; a test checks it against cmd/ and the action registry).
DIST_CMDS ?= $(shell $(GO) run ./tools/manifest -list-cmds)
# DIST_TARGETS: empty (a release) builds the six targets; the release path test
# sets the host target only (a manifest is only complete with all six).
DIST_TARGETS ?=

.PHONY: dist dist-verify source-digest

## dist: reproducible release binaries (linux/darwin/windows × amd64/arm64) + SHA256SUMS in $(DIST)/.
dist:
	rm -rf $(DIST)
	DIST_TARGETS='$(DIST_TARGETS)' GO=$(GO) bash tools/launcher/build-dist.sh $(DIST) $(DIST_CMDS)

## dist-verify: build the release binaries (make dist), build them again in a fresh directory and
## byte-compare the two (the reproducibility check of CI and of the release workflow); $(DIST) stays.
dist-verify: dist
	rm -rf $(DIST).verify
	DIST_TARGETS='$(DIST_TARGETS)' GO=$(GO) bash tools/launcher/build-dist.sh $(DIST).verify $(DIST_CMDS)
	diff -r $(DIST) $(DIST).verify
	rm -rf $(DIST).verify
	@echo "dist-verify: builds are byte-identical"

## source-digest: the digest launch.sh compares with the manifest's source_digest.
source-digest:
	@bash tools/launcher/source-digest.sh .

# ---- simulation (docs/simulation.md) -----------------------------------------
.PHONY: sim-ci sim-planted

## soak: SEEDS seeded fault-injected simulations (default 10000); prints seeds, schedules,
## state versions checked, faults injected by type and violations. SIM_SEED=N replays one seed.
soak:
	@if [ -n "$(SIM_SEED)" ]; then \
		SIM_SEED=$(SIM_SEED) $(GO) test -count=1 -artifacts -v -run '^TestSimulation$$' ./internal/sim; \
	else \
		GOGC=400 SIM_SEEDS=$(SEEDS) $(GO) test -count=1 -artifacts -timeout 0 -parallel 4 -v -run '^TestSoak$$' ./internal/sim 2>&1 | grep --line-buffered -v -e '^=== ' -e '--- PASS' ; \
	fi

## sim-ci: the CI tier (1,000 fixed seeds, no race detector), printing its progress every 100
## seeds (seeds done, violations so far) and its totals. GOGC=400: the seeds allocate briskly
## and the machine has memory to spare (fewer GC cycles). CGO_ENABLED=0 -trimpath are make cross's
## flags: on a linux/amd64 machine the simulation's dependencies come compiled from its cache.
sim-ci:
	@set -o pipefail; GOGC=400 SIM_CI=1 CGO_ENABLED=0 $(GO) test -trimpath -count=1 -artifacts -timeout 15m -parallel 4 -v -run '^TestSimulationCITier$$' ./internal/sim 2>&1 | \
		grep --line-buffered -v -e '^=== ' -e '--- PASS'

## sim-planted: each planted bug must be caught within 100 seeds by its invariant and by the
## linearizability check (test-only build tag). The sim targets pass -artifacts: porcupine's
## visualization of a failing seed stays in _artifacts/ (ignored by git).
sim-planted:
	$(GO) test -count=1 -artifacts -timeout 30m -tags plantedbugs -run '^TestPlantedBugs' ./internal/sim ./internal/store
