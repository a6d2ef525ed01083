package actioncontract_test

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// These tests check launch.ps1 without running it, on any machine: the
// case table runs it wherever a PowerShell exists (CI's Windows, macOS and
// Linux jobs), but the machine this was written on has none. They hold the
// PowerShell half to the POSIX half and to what Windows PowerShell 5.1 can
// parse and run.

func readLauncher(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "tools", "launcher", name))
	require.NoError(t, err)
	return string(b)
}

// TestLaunchPS1IsWindowsPowerShell51: ASCII only (5.1 reads a file without
// a byte-order mark in the ANSI code page), and none of the PowerShell 7 or
// .NET Core features 5.1 lacks.
func TestLaunchPS1IsWindowsPowerShell51(t *testing.T) {
	t.Parallel()
	src := readLauncher(t, "launch.ps1")
	for i, r := range src {
		if r > 0x7e || (r < 0x20 && r != '\n' && r != '\t' && r != '\r') {
			t.Fatalf("launch.ps1: byte %d is %q: Windows PowerShell 5.1 reads BOM-less scripts as ANSI; keep it ASCII", i, r)
		}
	}
	code := stripPSComments(src)
	for _, bad := range []struct{ re, why string }{
		{`\?\?`, "?? and ??= are PowerShell 7"},
		{`\?\.`, "?. is PowerShell 7"},
		{`\)\s*&&|\)\s*\|\||\w\s+&&\s|\w\s+\|\|\s`, "&& and || pipeline chains are PowerShell 7"},
		{`\$Is(Windows|Linux|MacOS)\b`, "$IsWindows and friends do not exist in 5.1 (StrictMode would throw)"},
		{`-AsHashtable|-SkipCertificateCheck|-AsByteStream|-Parallel\b|-AdditionalChildPath`, "a PowerShell 7 parameter"},
		{`\.ArgumentList\b`, "ProcessStartInfo.ArgumentList is .NET Core only"},
		{`SetUnixFileMode`, ".NET 7 only"},
		{`Invoke-WebRequest|Invoke-RestMethod`, "5.1's web cmdlets need Internet Explorer's engine unless -UseBasicParsing, and are slow with progress; use HttpWebRequest"},
		{`\bclass\s+\w+\s*\{`, "no classes: keep one flat script"},
	} {
		assert.NotRegexp(t, regexp.MustCompile(bad.re), code, bad.why)
	}
	assert.Contains(t, src, "$ErrorActionPreference = 'Stop'")
	assert.Contains(t, src, "Set-StrictMode -Version 2.0")
}

func stripPSComments(src string) string {
	var out []string
	for _, line := range strings.Split(src, "\n") {
		if t := strings.TrimSpace(line); strings.HasPrefix(t, "#") {
			continue
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

var (
	shCodeRE = regexp.MustCompile(`_bl_die ([a-z-]+) `)
	psCodeRE = regexp.MustCompile(`Stop-Bl '([a-z-]+)' `)
)

// TestBothLaunchersShareReasonCodesAndManifestExpressions: the same
// failure codes, and the same three manifest expressions ([[:space:]] in
// bash is \s in .NET), so a manifest means the same to both.
func TestBothLaunchersShareReasonCodesAndManifestExpressions(t *testing.T) {
	t.Parallel()
	sh, ps := readLauncher(t, "launch.sh"), readLauncher(t, "launch.ps1")
	codes := func(re *regexp.Regexp, s string) []string {
		seen := map[string]bool{}
		for _, m := range re.FindAllStringSubmatch(s, -1) {
			seen[m[1]] = true
		}
		var out []string
		for c := range seen {
			out = append(out, c)
		}
		sort.Strings(out)
		return out
	}
	shCodes, psCodes := codes(shCodeRE, sh), codes(psCodeRE, ps)
	// no-downloader is bash only: PowerShell downloads with .NET itself;
	// checksum (cannot hash the download) is bash only too.
	var shShared []string
	for _, c := range shCodes {
		if c != "no-downloader" && c != "checksum" {
			shShared = append(shShared, c)
		}
	}
	assert.Equal(t, shShared, psCodes, "both launchers must refuse with the same reason codes")
	assert.Subset(t, psCodes, []string{"usage", "binary-name", "platform", "insecure-url", "download", "checksum-mismatch", "no-go", "no-command", "build", "cache", "source-digest", "test-origin"})
	// The test release origin: one expression, the same in both.
	assert.Contains(t, sh, `_bl_origin_re='^https://(127\.0\.0\.1|localhost|\[::1\]):[0-9]{1,5}$'`)
	assert.Contains(t, ps, `'^https://(127\.0\.0\.1|localhost|\[::1\]):[0-9]{1,5}\z'`)

	for _, pair := range [][2]string{
		{`\"source_digest\"${_bl_ws}:${_bl_ws}\"([0-9a-f]*)\"`, `'"source_digest"\s*:\s*"([0-9a-f]*)"'`},
		{`\"tag\"${_bl_ws}:${_bl_ws}\"([^\"]*)\"`, `'"tag"\s*:\s*"([^"]*)"'`},
		{`\"${_bl_key}\"${_bl_ws}:${_bl_ws}\\{${_bl_ws}\"sha256\"${_bl_ws}:${_bl_ws}\"([0-9a-f]{64})\"${_bl_ws},${_bl_ws}\"url\"${_bl_ws}:${_bl_ws}\"([^\"]+)\"`,
			`'"' + $blKey + '"\s*:\s*\{\s*"sha256"\s*:\s*"([0-9a-f]{64})"\s*,\s*"url"\s*:\s*"([^"]+)"'`},
	} {
		assert.True(t, strings.Contains(sh, pair[0]), "launch.sh lacks the manifest expression %s", pair[0])
		assert.True(t, strings.Contains(ps, pair[1]), "launch.ps1 lacks the manifest expression %s", pair[1])
	}
	for _, shared := range []string{"ambiguous-build-lock", "digests", ".github", "manifest.json", "src-", "BUILD_LOCK_FROM_SOURCE", "BUILD_LOCK_GO",
		"RUNNER_TOOL_CACHE", "cache hit", "downloaded and verified", "built from source", "failed SHA-256 verification",
		"refusing to run it", "pin the commit that release tag", "/releases)",
		"BUILD_LOCK_TEST_RELEASE_ORIGIN", "ignoring BUILD_LOCK_TEST_RELEASE_ORIGIN: it is a test knob and this is a pinned checkout"} {
		assert.True(t, strings.Contains(sh, shared), "launch.sh lacks %q", shared)
		assert.True(t, strings.Contains(ps, shared), "launch.ps1 lacks %q", shared)
	}
}
