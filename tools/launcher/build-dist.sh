#!/usr/bin/env bash
# build-dist.sh OUTDIR [CMD...] — reproducible release binaries.
#
# Builds every cmd/<CMD> that exists for linux, darwin and windows × amd64 and
# arm64 into OUTDIR/<cmd>_<os>_<arch>[.exe] with CGO_ENABLED=0, -trimpath,
# -buildvcs=false and fixed ldflags (the same flags launch.sh uses for its
# source builds), then writes OUTDIR/SHA256SUMS and OUTDIR/source-digest.
# The command list is internal/releaseset's (make dist passes
# `go run ./tools/manifest -list-cmds`); a listed command that does not exist
# is an error. Used by `make dist` / `make dist-verify` and release.yml.
#
# DIST_TARGETS (optional) builds a subset of the six targets, space-separated
# GOOS/GOARCH pairs (the release path test builds the host target only). A
# release never sets it: tools/manifest refuses a manifest that lacks any
# command on any of the six targets.
set -euo pipefail
[ "$#" -ge 1 ] || { echo "usage: build-dist.sh OUTDIR [CMD...]" >&2; exit 2; }
out=$1
shift
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
# shellcheck source=source-digest.sh
. "$root/tools/launcher/source-digest.sh"
GO=${GO:-go}
all_platforms="linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64"
platforms=${DIST_TARGETS:-$all_platforms}
for p in $platforms; do
	case " $all_platforms " in
	*" $p "*) ;;
	*)
		echo "build-dist: DIST_TARGETS entry '$p' is not a release target ($all_platforms)" >&2
		exit 2
		;;
	esac
done
[ -n "${platforms// /}" ] || { echo "build-dist: DIST_TARGETS names no target" >&2; exit 2; }
mkdir -p "$out"
built=0
for cmd in "$@"; do
	if [ ! -d "$root/cmd/$cmd" ]; then
		echo "build-dist: no command cmd/$cmd" >&2
		exit 1
	fi
	for p in $platforms; do
		os=${p%/*}
		arch=${p#*/}
		ext=
		[ "$os" = windows ] && ext=.exe
		(cd "$root" && CGO_ENABLED=0 GOOS=$os GOARCH=$arch "$GO" build -trimpath -buildvcs=false \
			-ldflags "-s -w -buildid=" -o "$out/${cmd}_${os}_${arch}${ext}" "./cmd/$cmd")
		built=$((built + 1))
	done
done
[ "$built" -gt 0 ] || { echo "build-dist: none of the commands exists: $*" >&2; exit 1; }
(
	cd "$out"
	export LC_ALL=C # the glob sorts bytewise
	files=()
	for f in *; do
		case $f in SHA256SUMS | source-digest) ;; *) files+=("$f") ;; esac
	done
	bl_sha256 "${files[@]}" >SHA256SUMS
)
bl_source_digest "$root" >"$out/source-digest"
echo "build-dist: $built binaries in $out" >&2
