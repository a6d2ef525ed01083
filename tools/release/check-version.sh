#!/usr/bin/env bash
# check-version.sh VERSION — refuse anything but vMAJOR.MINOR.PATCH[-pre].
set -euo pipefail
re='^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$'
[[ ${1:-} =~ $re ]] || { echo "release: version must look like v1.2.3" >&2; exit 1; }
if git rev-parse -q --verify "refs/tags/$1" >/dev/null; then
	echo "release: tag $1 already exists" >&2
	exit 1
fi
