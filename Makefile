# The Makefile is the one entry point; CI (.ci/run) calls `make test`.
SHELL     := /bin/bash
GO        ?= go
PKGS      ?= ./...
BIN       ?= bin
# Pinned from the Go module proxy so `make lint` is reproducible on a fresh machine.
STATICCHECK_VERSION ?= v0.8.2
LDFLAGS   := -s -w -buildid=
SEEDS     ?= 10000

.PHONY: all test lint bench demo build soak fuzz clean cross

all: lint test

## test: go vet + the whole suite with the race detector, shuffled, uncached; then the
## simulation's 1,000-seed CI tier and the planted-bug proof (both without -race).
test:
	$(GO) vet $(PKGS)
	$(MAKE) --no-print-directory cross
	$(GO) test -race -shuffle=on -count=1 $(PKGS)
	$(MAKE) --no-print-directory sim-ci
	$(GO) test -count=1 -tags plantedbugs -run '^TestPlantedBugs' ./internal/sim

## lint: gofmt, go mod tidy diff, go vet, staticcheck (pinned).
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) mod tidy -diff
	$(GO) vet $(PKGS)
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) $(PKGS)

## bench: the named workloads (idle, burst, steady, crash, wait-1h) in virtual time through the
## real actions, then the demo row and the queue-size scale table (counts and ratios, not timings),
## then `buildlock history verify` of 1,000 and 10,000 commits (requests and wall time).
## BENCH_JSON=1 prints JSON instead; BENCH_OUT=file also writes the workload JSON to file.
bench:
	BENCH_JSON=$(BENCH_JSON) BENCH_OUT=$(BENCH_OUT) $(GO) test -count=1 -timeout 10m -run '^TestWorkloads$$' -v ./internal/bench
	$(GO) run ./cmd/buildlock bench $(if $(filter 1,$(BENCH_JSON)),--json)
	@set -o pipefail; BENCH_JSON=$(BENCH_JSON) $(GO) test -count=1 -timeout 10m -run '^TestHistoryVerifyScale$$' -v ./internal/bench | grep -v -e '^=== '

## demo: the main job on the embedded GitHub emulator.
demo:
	$(GO) run ./cmd/buildlock demo

## build: reproducible static binaries for every command.
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN)/ ./cmd/...

## cross: build and vet every package for the six release targets (linux/darwin/windows ×
## amd64/arm64), so build-tagged OS code compiles everywhere (run by make test).
CROSS_TARGETS ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64
cross:
	@set -e; for t in $(CROSS_TARGETS); do \
		echo "cross: $$t"; \
		GOOS=$${t%/*} GOARCH=$${t#*/} CGO_ENABLED=0 $(GO) build ./...; \
		GOOS=$${t%/*} GOARCH=$${t#*/} CGO_ENABLED=0 $(GO) vet ./...; \
	done

clean:
	rm -rf $(BIN)

# ---- packaging (docs/packaging.md); not part of `make test` -------------------
DIST      ?= dist
DIST_CMDS ?= acquire release require-current-pr-head reap recover

.PHONY: dist dist-verify source-digest

## dist: reproducible release binaries (linux/darwin/windows × amd64/arm64) + SHA256SUMS in $(DIST)/.
dist:
	rm -rf $(DIST)
	GO=$(GO) bash tools/launcher/build-dist.sh $(DIST) $(DIST_CMDS)

## dist-verify: build the release binaries twice in fresh directories and byte-compare them.
dist-verify:
	rm -rf $(DIST).verify-a $(DIST).verify-b
	GO=$(GO) bash tools/launcher/build-dist.sh $(DIST).verify-a $(DIST_CMDS)
	GO=$(GO) bash tools/launcher/build-dist.sh $(DIST).verify-b $(DIST_CMDS)
	diff -r $(DIST).verify-a $(DIST).verify-b
	rm -rf $(DIST).verify-a $(DIST).verify-b
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
		SIM_SEED=$(SIM_SEED) $(GO) test -count=1 -v -run '^TestSimulation$$' ./internal/sim; \
	else \
		GOGC=400 SIM_SEEDS=$(SEEDS) $(GO) test -count=1 -timeout 0 -parallel 4 -v -run '^TestSoak$$' ./internal/sim 2>&1 | grep -v -e '^=== ' -e '--- PASS' ; \
	fi

## sim-ci: the CI tier (1,000 fixed seeds, no race detector), printing its totals. GOGC=400:
## the seeds allocate briskly and the machine has memory to spare (fewer GC cycles).
sim-ci:
	@set -o pipefail; GOGC=400 SIM_CI=1 $(GO) test -count=1 -timeout 15m -parallel 4 -v -run '^TestSimulationCITier$$' ./internal/sim 2>&1 | \
		grep -v -e '^=== ' -e '--- PASS'

## sim-planted: each planted bug must be caught within 100 seeds (test-only build tag).
sim-planted:
	$(GO) test -count=1 -timeout 30m -tags plantedbugs -run '^TestPlantedBugs' ./internal/sim
