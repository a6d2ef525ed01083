#!/usr/bin/env bash
# publish.sh VERSION ALIAS NOTES_FILE — publish a release cut by
# commit-manifest.sh, in the order that never leaves a consumer pointed at a
# release without assets:
#   1. push the release tag (only the tag: the release commit stays reachable
#      through it and no branch protection is bypassed),
#   2. create the GitHub release with the dist/ binaries and SHA256SUMS and
#      the notes (which reference issues without closing keywords, so a
#      release never resolves an issue or pull request, and no label is set),
#   3. force-update the moving major alias (v1 for v1.x.y) to the release
#      commit, when ALIAS is not empty.
# Needs GH_TOKEN (step-level in the workflow) and GITHUB_REPOSITORY; the
# token reaches git through a one-shot header, never .git/config.
set -euo pipefail
version=$1
alias=$2
notes=$3
server=${GITHUB_SERVER_URL:-https://github.com}
remote="$server/${GITHUB_REPOSITORY}.git"
auth=$(printf 'x-access-token:%s' "$GH_TOKEN" | base64 | tr -d '\n')
push() { git -c "http.$server/.extraheader=AUTHORIZATION: basic $auth" push "$@"; }

push "$remote" "refs/tags/$version"
shopt -s nullglob
assets=(dist/*_linux_* dist/*_darwin_* dist/*_windows_* dist/SHA256SUMS)
gh release create "$version" --repo "$GITHUB_REPOSITORY" --verify-tag \
	--title "$version" --notes-file "$notes" "${assets[@]}"
if [ -n "$alias" ]; then
	git tag -f "$alias" "$version^{commit}"
	push --force "$remote" "refs/tags/$alias"
	echo "release: $alias now points to $version" >&2
fi
