#!/usr/bin/env bash
# install-tools.sh — the devcontainer's postCreateCommand: installs the tools
# make check calls, at the versions in tools/versions.env (the one place CI
# pins them), and warms the module cache.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=../../tools/versions.env
. tools/versions.env
sudo apt-get update -qq
sudo apt-get install -y -qq shellcheck >/dev/null
have=$(shellcheck --version | sed -n 's/^version: //p')
[ "$have" = "$SHELLCHECK_VERSION" ] || echo "install-tools: warning: shellcheck $have, CI pins $SHELLCHECK_VERSION" >&2
go install "github.com/rhysd/actionlint/cmd/actionlint@$ACTIONLINT_VERSION"
go install "golang.org/x/vuln/cmd/govulncheck@$GOVULNCHECK_VERSION"
go install "honnef.co/go/tools/cmd/staticcheck@$STATICCHECK_VERSION"
go mod download
