#!/usr/bin/env bash
# publish.sh VERSION — push the release tag (only the tag: the release commit
# stays reachable through it and no branch protection is bypassed), then
# create the GitHub release with the dist/ binaries and SHA256SUMS.
# Needs GH_TOKEN and GITHUB_REPOSITORY; the token is passed to git through a
# one-shot header, never persisted in .git/config.
set -euo pipefail
version=$1
auth=$(printf 'x-access-token:%s' "$GH_TOKEN" | base64 | tr -d '\n')
git -c "http.https://github.com/.extraheader=AUTHORIZATION: basic $auth" \
	push "https://github.com/${GITHUB_REPOSITORY}.git" "refs/tags/$version"
shopt -s nullglob
assets=(dist/*_linux_* dist/*_darwin_* dist/*_windows_* dist/SHA256SUMS)
gh release create "$version" --repo "$GITHUB_REPOSITORY" --verify-tag \
	--title "$version" --notes "Pin the commit this tag points to; see docs/packaging.md." "${assets[@]}"
