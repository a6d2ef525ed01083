#!/usr/bin/env bash
# commit-manifest.sh VERSION — write .github/dist/manifest.json from dist/ and
# commit it (the release commit) on a detached HEAD, then tag it. Needs
# GITHUB_REPOSITORY. Only the manifest changes, so the commit's source digest
# equals the one recorded in it; tools/manifest refuses a manifest that lacks
# any released command on any target.
set -euo pipefail
version=$1
if git rev-parse -q --verify "refs/tags/$version" >/dev/null; then
	echo "release: tag $version already exists" >&2
	exit 1
fi
digest=$(bash tools/launcher/source-digest.sh .)
[ "$digest" = "$(cat dist/source-digest)" ] || { echo "release: sources changed since make dist" >&2; exit 1; }
go run ./tools/manifest -dist dist -version "$version" -tag "$version" \
	-repo "$GITHUB_REPOSITORY" -source-digest "$digest" -out .github/dist/manifest.json
go run ./tools/manifest -check .github/dist/manifest.json
git config user.name "github-actions[bot]"
git config user.email "41898282+github-actions[bot]@users.noreply.github.com"
git checkout -q --detach
git add .github/dist/manifest.json
git commit -q -m "release $version: binary manifest"
git tag -a "$version" -m "release $version"
echo "release: commit $(git rev-parse HEAD) tagged $version" >&2
