#!/usr/bin/env bash
# The complete CI-equivalent local check: lint, then the README's test command, then the demo.
set -euo pipefail
cd "$(dirname "$0")/../.."
make lint
make test
make demo
