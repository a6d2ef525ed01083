#!/usr/bin/env bash
# source-digest.sh — the deterministic digest of the Go sources of a checkout.
#
# Usage:  bash tools/launcher/source-digest.sh [ROOT]      prints the digest
#         . tools/launcher/source-digest.sh                 defines bl_source_digest
#
# Definition (docs/packaging.md "Source digest"; the ONE implementation, used
# by launch.sh at run time and by `make dist` / the release workflow):
#   1. The file set is go.mod, go.sum and every regular file named *.go under
#      ROOT, skipping directories named .git, dist, bin and node_modules.
#   2. Paths are relative to ROOT, '/'-separated, sorted bytewise (LC_ALL=C).
#   3. The listing is one line per file: "<sha256 hex of the file bytes>  <path>\n"
#      (exactly `sha256sum` output).
#   4. The digest is the lowercase sha256 hex of that listing.
# A missing go.sum is an error: a released commit always has one.
#
# Portable to bash 3.2 (macOS /bin/bash) and Git Bash on Windows: no mapfile,
# no associative arrays; sha256sum, shasum or openssl, whichever exists.

# bl_sha256 FILE... — print "<hex>  <path>" per file, sha256sum style.
bl_sha256() {
	if command -v sha256sum >/dev/null 2>&1; then
		sha256sum -- "$@" | sed -e 's/^\\//' -e 's/ \*/  /'
	elif command -v shasum >/dev/null 2>&1; then
		shasum -a 256 -- "$@" | sed -e 's/^\\//' -e 's/ \*/  /'
	elif command -v openssl >/dev/null 2>&1; then
		openssl dgst -sha256 -r -- "$@" | sed -e 's/ \*/  /'
	else
		echo "build-lock launcher: error: no sha256 tool found (need sha256sum, shasum or openssl)" >&2
		return 1
	fi
}

# bl_sha256_stdin — print the sha256 hex of standard input.
bl_sha256_stdin() {
	local out
	if command -v sha256sum >/dev/null 2>&1; then
		out=$(sha256sum)
	elif command -v shasum >/dev/null 2>&1; then
		out=$(shasum -a 256)
	elif command -v openssl >/dev/null 2>&1; then
		out=$(openssl dgst -sha256 -r)
	else
		echo "build-lock launcher: error: no sha256 tool found (need sha256sum, shasum or openssl)" >&2
		return 1
	fi
	printf '%s\n' "${out%% *}"
}

# bl_source_digest ROOT — print the source digest of ROOT (see the header).
bl_source_digest() {
	(
		set -eu
		cd "$1" || exit 1
		[ -f go.mod ] && [ -f go.sum ] || {
			echo "build-lock launcher: error: $1 has no go.mod/go.sum" >&2
			exit 1
		}
		files=$({
			printf '%s\n' go.mod go.sum
			find . \( -name .git -o -name dist -o -name bin -o -name node_modules \) -prune \
				-o -type f -name '*.go' -print | sed 's|^\./||'
		} | LC_ALL=C sort -u)
		# One sha256 invocation for all files (process spawns are slow on Windows).
		# File names never contain newlines or leading dashes in a Go module.
		old_ifs=$IFS
		IFS='
'
		# shellcheck disable=SC2086 # deliberate split on newlines only
		listing=$(bl_sha256 $files)
		IFS=$old_ifs
		printf '%s\n' "$listing" | bl_sha256_stdin
	)
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	set -euo pipefail
	bl_source_digest "${1:-.}"
fi
