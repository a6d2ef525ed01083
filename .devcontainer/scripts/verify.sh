#!/usr/bin/env bash
# verify.sh — the complete CI-equivalent local check, run inside the
# devcontainer (or anywhere with the pinned tools):
#
#   .devcontainer/scripts/verify.sh            pins check, then make check, then make demo
#   .devcontainer/scripts/verify.sh --dry-run  only the pins check (make test runs this)
#
# make check runs: make lint (gofmt, go mod tidy, vet, staticcheck), make test
# (vet, make cross, the race suite, the simulation tier), make workflow-lint
# (actionlint + shellcheck) and make vulncheck (govulncheck). The pins check
# proves that every tool it calls is pinned the same as CI: one place,
# tools/versions.env, agrees with go.mod, the Makefile, every workflow and
# the devcontainer, and CI runs the same make targets. It reads files only.
set -euo pipefail
cd "$(dirname "$0")/../.."

fail=0
problem() {
	printf 'verify: pin mismatch: %s\n' "$*" >&2
	fail=1
}
need_line() { # FILE REGEX WHAT
	grep -Eq -- "$2" "$1" || problem "$1: $3"
}

# shellcheck source=../../tools/versions.env
. tools/versions.env
for v in GO_VERSION NODE_VERSION STATICCHECK_VERSION GOVULNCHECK_VERSION ACTIONLINT_VERSION SHELLCHECK_VERSION; do
	[ -n "${!v:-}" ] || problem "tools/versions.env: $v is not set"
done

check_pins() {
	local re_go=${GO_VERSION//./\\.}
	# Go: go.mod's go line, which setup-go reads, and the image tag.
	need_line go.mod "^go ${re_go}(\\.[0-9]+)?$" "the go line must be go ${GO_VERSION}[.x] (GO_VERSION)"
	need_line .devcontainer/devcontainer.json "\"image\": \"mcr\\.microsoft\\.com/devcontainers/go:${re_go}-[a-z]+@sha256:[0-9a-f]{64}\"" \
		"the image must be devcontainers/go:${GO_VERSION}-<debian> pinned by @sha256 digest"
	need_line .devcontainer/devcontainer.json "\"ghcr\\.io/devcontainers/features/node:1\": \\{ \"version\": \"${NODE_VERSION}\" \\}" \
		"the node feature must be version ${NODE_VERSION} (NODE_VERSION)"
	# actionlint: the library the tests use is the command make workflow-lint runs.
	need_line go.mod "^[[:space:]]*github\\.com/rhysd/actionlint ${ACTIONLINT_VERSION//./\\.}$" "actionlint must be ${ACTIONLINT_VERSION} (ACTIONLINT_VERSION)"
	# The Makefile takes every version from tools/versions.env.
	need_line Makefile '^include tools/versions\.env$' "must include tools/versions.env"
	need_line Makefile 'staticcheck@\$\(STATICCHECK_VERSION\)' "staticcheck must run at \$(STATICCHECK_VERSION)"
	need_line Makefile 'govulncheck@\$\(GOVULNCHECK_VERSION\)' "govulncheck must run at \$(GOVULNCHECK_VERSION)"
	need_line Makefile '\$\(SHELLCHECK_VERSION\)' "workflow-lint must require \$(SHELLCHECK_VERSION)"
	need_line Makefile 'run github\.com/rhysd/actionlint/cmd/actionlint' "actionlint must run from go.mod"
	need_line .devcontainer/scripts/install-tools.sh '^\. tools/versions\.env$' "must source tools/versions.env"
	# Workflows: no version literal of a pinned tool; Go from go.mod, Node
	# from tools/versions.env; CI runs the same targets as make check.
	local wf
	for wf in .github/workflows/*.yml; do
		if grep -Eq '^[[:space:]]*go-version:' "$wf"; then problem "$wf: setup-go must use go-version-file: go.mod"; fi
		if grep -Eq '^[[:space:]]*node-version:[[:space:]]*["'"'"']?[0-9]' "$wf"; then problem "$wf: node-version must come from tools/versions.env"; fi
		if grep -Eq 'honnef\.co/go/tools|golang\.org/x/vuln|rhysd/actionlint|shellcheck[=@ ][0-9]' "$wf"; then
			problem "$wf: tools run through make targets, never with a version of their own"
		fi
	done
	local target
	for target in lint test workflow-lint vulncheck cross; do
		need_line Makefile "^${target}:" "make check needs the target ${target}"
	done
	for target in lint test workflow-lint vulncheck; do
		need_line .github/workflows/ci.yml "run: make ${target}\$" "CI must run make ${target}, as make check does"
	done
}

check_pins
if [ "$fail" -ne 0 ]; then
	echo "verify: fix tools/versions.env or the file named above (docs/packaging.md \"Tool versions\")" >&2
	exit 1
fi
if [ "${1:-}" = --dry-run ]; then
	printf 'verify: pins agree with CI: go %s, node %s, staticcheck %s, govulncheck %s, actionlint %s, shellcheck %s\n' \
		"$GO_VERSION" "$NODE_VERSION" "$STATICCHECK_VERSION" "$GOVULNCHECK_VERSION" "$ACTIONLINT_VERSION" "$SHELLCHECK_VERSION"
	echo "verify: would run: make check (lint, test, workflow-lint, vulncheck), then make demo"
	exit 0
fi
make check
make demo
