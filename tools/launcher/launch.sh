#!/usr/bin/env bash
# launch.sh — run one of this repository's Go binaries on a Linux or macOS runner.
#
# Usage: bash launch.sh <binary-name> [args...]
#
# This is the POSIX half of the one launcher contract (docs/packaging.md
# "The launcher contract"); tools/launcher/launch.ps1 is the Windows half.
# Both follow the same steps, print the same reason codes and are run against
# the same case table (internal/actioncontract/launchercases_test.go):
#
#   1. Refuse a binary name outside ^[a-z][a-z0-9-]*$       [binary-name]
#   2. Map RUNNER_OS/RUNNER_ARCH (uname when unset) to GOOS/GOARCH.
#   3. Use the release asset <name>_<os>_<arch> only when the committed
#      .github/dist/manifest.json lists it AND the checkout's Go sources hash
#      to the manifest's source_digest AND BUILD_LOCK_FROM_SOURCE is not 1.
#      The asset is taken from the runner cache when its SHA-256 matches the
#      manifest, otherwise downloaded (https only, redirects https only),
#      verified against the manifest BEFORE it is ever executed, and stored in
#      the cache atomically.
#   4. Otherwise build it from the checkout's sources with a local Go into a
#      cache keyed by the source digest; without Go, fail naming the release
#      to pin                                                [no-go]
#   5. exec the binary with the same arguments and environment, so it becomes
#      the step's process and receives the runner's SIGINT/SIGTERM directly
#      (https://github.com/actions/runner/issues/1309).
#
# Every failure line is "build-lock launcher: error [<code>]: <message>".
#
# Never touches PATH, GITHUB_PATH, GITHUB_ENV or anything exported: every
# variable below is a non-exported shell variable prefixed _bl_.
#
# Environment read (all optional):
#   RUNNER_OS, RUNNER_ARCH   runner platform (Linux|macOS|Windows, X64|ARM64)
#                            https://docs.github.com/en/actions/reference/workflows-and-actions/variables
#   RUNNER_TOOL_CACHE        cache root (default $HOME/.cache)
#   BUILD_LOCK_FROM_SOURCE=1 force a source build
#   BUILD_LOCK_GO            Go command for source builds (default: go)
#   BUILD_LOCK_ACTION_REPOSITORY, GITHUB_ACTION_REPOSITORY
#                            only to name the releases page in the no-Go error
#   BUILD_LOCK_TEST_RELEASE_ORIGIN=https://127.0.0.1:PORT
#                            tests only: download release assets from this
#                            loopback https origin instead of the manifest
#                            URL's (same path). Ignored in a pinned checkout
#                            (every consumer's), refused unless it is exactly
#                            https://{127.0.0.1|localhost|[::1]}:PORT
#                            [test-origin]; the manifest's SHA-256 still
#                            decides what runs.
#
# Needs bash (the runner's own scripts are bash), curl or wget for a download,
# and sha256sum, shasum or openssl. Portable to bash 3.2 (macOS /bin/bash).
set -euo pipefail

_bl_note() { printf 'build-lock launcher: %s\n' "$*" >&2; }
# _bl_die CODE MESSAGE — the one failure exit (status 1).
_bl_die() {
	local _bl_code=$1
	shift
	printf 'build-lock launcher: error [%s]: %s\n' "$_bl_code" "$*" >&2
	exit 1
}

[ "$#" -ge 1 ] || _bl_die usage "usage: launch.sh <binary-name> [args...]"
_bl_name=$1
shift
_bl_name_re='^[a-z][a-z0-9-]*$'
[[ $_bl_name =~ $_bl_name_re ]] || _bl_die binary-name "refusing binary name: it must match ^[a-z][a-z0-9-]*\$"

case "${BASH_SOURCE[0]}" in
*/*) _bl_here=${BASH_SOURCE[0]%/*} ;;
*) _bl_here=. ;;
esac
_bl_here=$(cd "$_bl_here" && pwd -P)
_bl_root=$(cd "$_bl_here/../.." && pwd -P)
# shellcheck source=source-digest.sh
. "$_bl_here/source-digest.sh"

# --- platform ----------------------------------------------------------------
case "${RUNNER_OS:-}" in
Linux) _bl_os=linux ;;
macOS) _bl_os=darwin ;;
Windows) _bl_os=windows ;;
"")
	case "$(uname -s)" in
	Linux*) _bl_os=linux ;;
	Darwin*) _bl_os=darwin ;;
	MINGW* | MSYS* | CYGWIN*) _bl_os=windows ;;
	*) _bl_die platform "unsupported operating system $(uname -s)" ;;
	esac
	;;
*) _bl_die platform "unsupported RUNNER_OS ${RUNNER_OS}" ;;
esac
case "${RUNNER_ARCH:-}" in
X64) _bl_arch=amd64 ;;
ARM64) _bl_arch=arm64 ;;
"")
	case "$(uname -m)" in
	x86_64 | amd64) _bl_arch=amd64 ;;
	aarch64 | arm64) _bl_arch=arm64 ;;
	*) _bl_arch=unsupported ;;
	esac
	;;
*) _bl_arch=unsupported ;; # X86, ARM: no release asset; a source build may still work
esac
_bl_exe=
[ "$_bl_os" = windows ] && _bl_exe=.exe
_bl_key=${_bl_name}_${_bl_os}_${_bl_arch}

# --- cache root ----------------------------------------------------------------
_bl_cache=${RUNNER_TOOL_CACHE:-${HOME:-/tmp}/.cache}
if command -v cygpath >/dev/null 2>&1; then
	_bl_cache=$(cygpath -u "$_bl_cache") # C:\hostedtoolcache\windows → /c/hostedtoolcache/windows
fi
_bl_cache=$_bl_cache/ambiguous-build-lock

# _bl_hash FILE — sha256 hex of FILE.
_bl_hash() {
	local _bl_line
	_bl_line=$(bl_sha256 "$1") || return 1
	printf '%s\n' "${_bl_line%% *}"
}

# --- manifest -------------------------------------------------------------------
# The manifest is machine-written by tools/manifest in a canonical layout (one
# asset per line); a contract test keeps the committed file canonical, so a
# regular expression is enough and no jq/python/node is needed on the runner.
# launch.ps1 uses the same three expressions.
_bl_manifest=$_bl_root/.github/dist/manifest.json
_bl_m=
[ -f "$_bl_manifest" ] && _bl_m=$(<"$_bl_manifest")
_bl_ws='[[:space:]]*'
_bl_want_digest=
_bl_re="\"source_digest\"${_bl_ws}:${_bl_ws}\"([0-9a-f]*)\""
[[ $_bl_m =~ $_bl_re ]] && _bl_want_digest=${BASH_REMATCH[1]}
_bl_tag=
_bl_re="\"tag\"${_bl_ws}:${_bl_ws}\"([^\"]*)\""
[[ $_bl_m =~ $_bl_re ]] && _bl_tag=${BASH_REMATCH[1]}
_bl_sha=
_bl_url=
_bl_re="\"${_bl_key}\"${_bl_ws}:${_bl_ws}\\{${_bl_ws}\"sha256\"${_bl_ws}:${_bl_ws}\"([0-9a-f]{64})\"${_bl_ws},${_bl_ws}\"url\"${_bl_ws}:${_bl_ws}\"([^\"]+)\""
if [[ $_bl_m =~ $_bl_re ]]; then
	_bl_sha=${BASH_REMATCH[1]}
	_bl_url=${BASH_REMATCH[2]}
fi

# _bl_root_digest — the source digest of the checkout. A pinned action is
# checked out by the runner under _actions/<owner>/<repo>/<40-hex commit>, and a
# commit names its tree exactly, so the digest is computed once per commit and
# memoized in the cache: a warm start then costs one SHA-256 of the binary,
# not a hash of every source file. Any other checkout (uses: ./, local runs) is
# hashed every time.
_bl_pinned=${_bl_root##*/}
_bl_hex40='^[0-9a-f]{40}$'
[[ $_bl_pinned =~ $_bl_hex40 ]] || _bl_pinned=
_bl_root_digest() {
	local _bl_memo='' _bl_d
	if [ -n "$_bl_pinned" ]; then
		_bl_memo=$_bl_cache/digests/$_bl_pinned
		if [ -f "$_bl_memo" ]; then
			_bl_d=$(<"$_bl_memo")
			[[ $_bl_d =~ ^[0-9a-f]{64}$ ]] && {
				printf '%s\n' "$_bl_d"
				return 0
			}
		fi
	fi
	_bl_d=$(bl_source_digest "$_bl_root") || return 1
	if [ -n "$_bl_memo" ] && mkdir -p -- "$_bl_cache/digests" 2>/dev/null; then
		printf '%s' "$_bl_d" >"$_bl_memo.$$" 2>/dev/null && mv -f -- "$_bl_memo.$$" "$_bl_memo" 2>/dev/null || rm -f -- "$_bl_memo.$$"
	fi
	printf '%s\n' "$_bl_d"
}

# --- test release origin (tests only) -------------------------------------------
# BUILD_LOCK_TEST_RELEASE_ORIGIN points the download at a local https server
# (internal/actioncontract's release path test). It can never take effect for
# a consumer: a pinned action is checked out under a 40-hex directory, where
# the knob is ignored; elsewhere only a loopback https origin is accepted; and
# whatever is downloaded must still match the SHA-256 the checkout's manifest
# pins. Trusting the test server's certificate is the test's business (it sets
# curl's CURL_CA_BUNDLE); nothing here relaxes TLS verification.
_bl_test_origin=${BUILD_LOCK_TEST_RELEASE_ORIGIN:-}
if [ -n "$_bl_test_origin" ]; then
	if [ -n "$_bl_pinned" ]; then
		_bl_note "ignoring BUILD_LOCK_TEST_RELEASE_ORIGIN: it is a test knob and this is a pinned checkout"
		_bl_test_origin=
	else
		_bl_origin_re='^https://(127\.0\.0\.1|localhost|\[::1\]):[0-9]{1,5}$'
		[[ $_bl_test_origin =~ $_bl_origin_re ]] ||
			_bl_die test-origin "BUILD_LOCK_TEST_RELEASE_ORIGIN must be https://127.0.0.1:PORT, https://localhost:PORT or https://[::1]:PORT (a test knob); unset it"
	fi
fi

# --- decide ---------------------------------------------------------------------------
_bl_digest=
_bl_reason=
if [ "${BUILD_LOCK_FROM_SOURCE:-}" = 1 ]; then
	_bl_reason="BUILD_LOCK_FROM_SOURCE=1"
elif [ -z "$_bl_sha" ]; then
	_bl_reason="the manifest has no release asset ${_bl_key}"
else
	_bl_digest=$(_bl_root_digest) || _bl_die source-digest "cannot compute the source digest of $_bl_root"
	if [ "$_bl_digest" != "$_bl_want_digest" ]; then
		_bl_reason="this commit's Go sources differ from the manifest's source_digest (release ${_bl_tag:-unknown})"
	fi
fi

# _bl_download URL FILE — fetch URL to FILE with bounded retries; https only
# (plain http only on loopback, for tests), redirects https only.
_bl_download() {
	if command -v curl >/dev/null 2>&1; then
		curl --fail --silent --show-error --location \
			--proto '=https,http' --proto-redir '=https' \
			--connect-timeout 15 --max-time 300 --retry 3 --retry-delay 2 \
			--output "$2" -- "$1"
	elif command -v wget >/dev/null 2>&1; then
		# wget cannot restrict the scheme of a redirect (GitHub's release
		# downloads redirect once); the SHA-256 check below still decides.
		wget --quiet --tries=4 --waitretry=2 --timeout=15 --output-document="$2" -- "$1"
	else
		return 127
	fi
}

# --- release asset path ----------------------------------------------------------------
if [ -z "$_bl_reason" ]; then
	_bl_dir=$_bl_cache/$_bl_sha
	_bl_bin=$_bl_dir/$_bl_name$_bl_exe
	if [ -f "$_bl_bin" ]; then
		if [ "$(_bl_hash "$_bl_bin")" = "$_bl_sha" ]; then
			_bl_note "running ${_bl_key} ${_bl_tag} (cache hit, sha256 ${_bl_sha:0:12})"
			exec "$_bl_bin" "$@"
		fi
		_bl_note "cached ${_bl_key} failed SHA-256 verification; discarding it and downloading again"
		rm -f -- "$_bl_bin"
	fi
	if [ -n "$_bl_test_origin" ]; then
		_bl_rest=${_bl_url#*://}
		case "$_bl_rest" in
		*/*) _bl_url=$_bl_test_origin/${_bl_rest#*/} ;;
		*) _bl_url=$_bl_test_origin/ ;;
		esac
	fi
	case "$_bl_url" in
	https://* | http://127.0.0.1:* | http://localhost:*) ;;
	*) _bl_die insecure-url "manifest URL for ${_bl_key} must be https://" ;;
	esac
	command -v curl >/dev/null 2>&1 || command -v wget >/dev/null 2>&1 ||
		_bl_die no-downloader "curl or wget is required to download ${_bl_key}; install curl, or install Go and set BUILD_LOCK_FROM_SOURCE=1"
	mkdir -p -- "$_bl_dir" || _bl_die cache "cannot create cache directory $_bl_dir"
	_bl_tmp=$(mktemp "$_bl_dir/.download.XXXXXX") || _bl_die cache "cannot create a temporary file in $_bl_dir"
	if ! _bl_download "$_bl_url" "$_bl_tmp"; then
		rm -f -- "$_bl_tmp"
		_bl_die download "download of ${_bl_key} (${_bl_tag}) failed after retries: $_bl_url"
	fi
	_bl_got=$(_bl_hash "$_bl_tmp") || {
		rm -f -- "$_bl_tmp"
		_bl_die checksum "cannot hash the download"
	}
	if [ "$_bl_got" != "$_bl_sha" ]; then
		rm -f -- "$_bl_tmp"
		_bl_die checksum-mismatch "checksum mismatch for ${_bl_key}: the manifest pins sha256 ${_bl_sha} but the download is ${_bl_got}; refusing to run it"
	fi
	chmod 755 "$_bl_tmp"
	# Atomic publish. A concurrent job may have published the same file; then
	# the already-present copy is used if it verifies.
	if ! mv -f -- "$_bl_tmp" "$_bl_bin" 2>/dev/null; then
		rm -f -- "$_bl_tmp"
		[ -f "$_bl_bin" ] && [ "$(_bl_hash "$_bl_bin")" = "$_bl_sha" ] ||
			_bl_die cache "cannot store ${_bl_key} in $_bl_dir"
	fi
	_bl_note "running ${_bl_key} ${_bl_tag} (downloaded and verified, sha256 ${_bl_sha:0:12})"
	exec "$_bl_bin" "$@"
fi

# --- source build path ------------------------------------------------------------------
_bl_go=${BUILD_LOCK_GO:-go}
if ! command -v "$_bl_go" >/dev/null 2>&1; then
	_bl_repo=${BUILD_LOCK_ACTION_REPOSITORY:-${GITHUB_ACTION_REPOSITORY:-}}
	if [ -n "$_bl_tag" ]; then
		_bl_pin="pin the commit that release tag ${_bl_tag} points to"
	elif [ -n "$_bl_repo" ]; then
		_bl_pin="pin the commit a release tag of ${_bl_repo} points to (https://github.com/${_bl_repo}/releases)"
	else
		_bl_pin="pin the commit a release tag of this repository points to"
	fi
	_bl_die no-go "cannot run ${_bl_name}: ${_bl_reason}, so it must be built from source, but no Go toolchain ('${_bl_go}') was found. Either ${_bl_pin} (its .github/dist/manifest.json lists ${_bl_key}), or install Go (version in go.mod) on this runner."
fi
[ -d "$_bl_root/cmd/$_bl_name" ] || _bl_die no-command "no command cmd/${_bl_name} in $_bl_root"
[ -n "$_bl_digest" ] || _bl_digest=$(_bl_root_digest) || _bl_die source-digest "cannot compute the source digest of $_bl_root"
_bl_dir=$_bl_cache/src-${_bl_digest}-${_bl_os}_${_bl_arch}
_bl_bin=$_bl_dir/$_bl_name$_bl_exe
# The side file records the hash of the binary as built, so a truncated or
# replaced file is rebuilt rather than run.
if [ -f "$_bl_bin" ] && [ -f "$_bl_bin.sha256" ] &&
	[ "$(_bl_hash "$_bl_bin")" = "$(<"$_bl_bin.sha256")" ]; then
	_bl_note "running ${_bl_name} built from source ${_bl_digest:0:12} (cache hit; ${_bl_reason})"
	exec "$_bl_bin" "$@"
fi
mkdir -p -- "$_bl_dir" || _bl_die cache "cannot create cache directory $_bl_dir"
_bl_tmp=$(mktemp "$_bl_dir/.build.XXXXXX") || _bl_die cache "cannot create a temporary file in $_bl_dir"
# Build output goes to stderr: the binary's stdout carries workflow commands.
if ! (cd "$_bl_root" && CGO_ENABLED=0 "$_bl_go" build -trimpath -buildvcs=false \
	-ldflags "-s -w -buildid=" -o "$_bl_tmp" "./cmd/$_bl_name") 1>&2; then
	rm -f -- "$_bl_tmp"
	_bl_die build "go build ./cmd/${_bl_name} failed (see above)"
fi
chmod 755 "$_bl_tmp"
_bl_h=$(_bl_hash "$_bl_tmp") || _bl_die build "cannot hash the build"
if ! mv -f -- "$_bl_tmp" "$_bl_bin" 2>/dev/null; then
	rm -f -- "$_bl_tmp"
	[ -f "$_bl_bin" ] || _bl_die cache "cannot store ${_bl_name} in $_bl_dir"
	_bl_h=$(_bl_hash "$_bl_bin")
fi
_bl_tmp=$(mktemp "$_bl_dir/.sum.XXXXXX") && printf '%s' "$_bl_h" >"$_bl_tmp" &&
	mv -f -- "$_bl_tmp" "$_bl_bin.sha256" 2>/dev/null || rm -f -- "$_bl_tmp"
_bl_note "running ${_bl_name} built from source ${_bl_digest:0:12} (${_bl_reason})"
exec "$_bl_bin" "$@"
