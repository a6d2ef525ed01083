package releaseset_test

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actioncontract"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/releaseset"
)

const root = "../.."

// TestEveryCommandIsReleased: the release list is cmd/ itself (minus the
// documented exclusions), so a command added by any change is released.
func TestEveryCommandIsReleased(t *testing.T) {
	t.Parallel()
	cmds, err := releaseset.Commands(root)
	require.NoError(t, err)
	entries, err := os.ReadDir(filepath.Join(root, "cmd"))
	require.NoError(t, err)
	var want []string
	for _, e := range entries {
		if _, skip := releaseset.Excluded[e.Name()]; e.IsDir() && !skip {
			want = append(want, e.Name())
		}
	}
	sort.Strings(want)
	assert.Equal(t, want, cmds)
	for name, why := range releaseset.Excluded {
		assert.NotEmpty(t, strings.TrimSpace(why), "exclusion %s needs its reason", name)
	}
}

// TestEveryActionBinaryIsReleased: each action's launcher finds a manifest
// entry for its binary on every target of a release.
func TestEveryActionBinaryIsReleased(t *testing.T) {
	t.Parallel()
	cmds, err := releaseset.Commands(root)
	require.NoError(t, err)
	for dir, a := range actioncontract.Registry {
		assert.Contains(t, cmds, a.Binary, "action %s runs %s, which a release would not ship", dir, a.Binary)
	}
}

// TestTargetsAreTheSameEverywhere: make cross and the release build script
// build exactly the release targets.
func TestTargetsAreTheSameEverywhere(t *testing.T) {
	t.Parallel()
	var want []string
	for _, tg := range releaseset.Targets {
		want = append(want, tg.String())
	}
	for file, re := range map[string]*regexp.Regexp{
		"Makefile":                     regexp.MustCompile(`(?m)^CROSS_TARGETS \?= (.*)$`),
		"tools/launcher/build-dist.sh": regexp.MustCompile(`(?m)^all_platforms="(.*)"$`),
	} {
		b, err := os.ReadFile(filepath.Join(root, file))
		require.NoError(t, err)
		m := re.FindSubmatch(b)
		require.NotNil(t, m, "%s: no target list", file)
		assert.Equal(t, want, strings.Fields(string(m[1])), file)
	}
}

func TestCommandsRefusesAStaleExclusion(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "cmd", "a"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cmd", "a", "main.go"), []byte("package main\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "cmd", "testonly"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cmd", "testonly", "x_test.go"), []byte("package main\n"), 0o644))
	cmds, err := releaseset.Commands(dir)
	require.NoError(t, err)
	assert.Equal(t, []string{"a"}, cmds, "a directory without a main package is no command")

	releaseset.Excluded["gone"] = "test"
	defer delete(releaseset.Excluded, "gone")
	_, err = releaseset.Commands(dir)
	assert.ErrorContains(t, err, `"gone"`)
}

func TestAssetNames(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "acquire_windows_arm64.exe", releaseset.AssetFile("acquire", releaseset.Target{GOOS: "windows", GOARCH: "arm64"}))
	assert.Equal(t, "acquire_darwin_amd64", releaseset.AssetFile("acquire", releaseset.Target{GOOS: "darwin", GOARCH: "amd64"}))
	keys := releaseset.AssetKeys([]string{"b", "a"})
	assert.Len(t, keys, 12)
	have := map[string]bool{}
	for _, k := range keys[1:] {
		have[k] = true
	}
	assert.Equal(t, []string{keys[0]}, releaseset.Missing([]string{"a", "b"}, func(k string) bool { return have[k] }))
}
