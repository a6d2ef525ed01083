package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/releaseset"
)

func TestCommittedManifestIsCanonical(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("..", "..", ".github", "dist", "manifest.json"))
	require.NoError(t, err)
	require.NoError(t, Check(b))
	cmds, err := releaseset.Commands(filepath.Join("..", ".."))
	require.NoError(t, err)
	require.NoError(t, CheckComplete(b, cmds))
}

func TestFromDistRenderCheck(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "acquire_linux_amd64"), []byte("x"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "acquire_windows_arm64.exe"), []byte("y"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "SHA256SUMS"), []byte("z"), 0o644))
	digest := "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	m, err := FromDist(dir, "v1.0.0", "v1.0.0", "o/r", digest)
	require.NoError(t, err)
	want := `{
  "version": "v1.0.0",
  "tag": "v1.0.0",
  "source_digest": "` + digest + `",
  "assets": {
    "acquire_linux_amd64": {"sha256": "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881", "url": "https://github.com/o/r/releases/download/v1.0.0/acquire_linux_amd64"},
    "acquire_windows_arm64": {"sha256": "a1fce4363854ff888cff4b8e7875d600c2682390412a8cf79b37d0b11148b0fa", "url": "https://github.com/o/r/releases/download/v1.0.0/acquire_windows_arm64.exe"}
  }
}
`
	assert.Equal(t, want, string(Render(m)))
	require.NoError(t, Check(Render(m)))
}

// TestCompleteness: a release manifest written from a dist directory must
// carry every released command on every target, and -check refuses one that
// does not.
func TestCompleteness(t *testing.T) {
	t.Parallel()
	cmds, err := releaseset.Commands(filepath.Join("..", ".."))
	require.NoError(t, err)
	dir := t.TempDir()
	for _, c := range cmds {
		for _, tg := range releaseset.Targets {
			require.NoError(t, os.WriteFile(filepath.Join(dir, releaseset.AssetFile(c, tg)), []byte(c+tg.String()), 0o755))
		}
	}
	digest := "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	out := filepath.Join(t.TempDir(), "manifest.json")
	root := filepath.Join("..", "..")
	var stdout strings.Builder
	require.NoError(t, run([]string{"-root", root, "-dist", dir, "-version", "v1.0.0", "-repo", "o/r", "-source-digest", digest, "-out", out}, &stdout))
	require.NoError(t, run([]string{"-root", root, "-check", out}, &stdout))

	require.NoError(t, os.Remove(filepath.Join(dir, releaseset.AssetFile(cmds[0], releaseset.Targets[5]))))
	err = run([]string{"-root", root, "-dist", dir, "-version", "v1.0.0", "-repo", "o/r", "-source-digest", digest, "-out", out}, &stdout)
	assert.ErrorContains(t, err, releaseset.AssetKey(cmds[0], releaseset.Targets[5]))
	m, err := FromDist(dir, "v1.0.0", "v1.0.0", "o/r", digest)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(out, Render(m), 0o644))
	assert.ErrorContains(t, run([]string{"-root", root, "-check", out}, &stdout), "incomplete")

	stdout.Reset()
	require.NoError(t, run([]string{"-root", root, "-list-cmds"}, &stdout))
	assert.Equal(t, strings.Join(cmds, "\n")+"\n", stdout.String())
}

func TestCheckRejects(t *testing.T) {
	t.Parallel()
	for name, doc := range map[string]string{
		"not canonical": "{\"version\":\"\",\"tag\":\"\",\"source_digest\":\"\",\"assets\":{}}\n",
		"unknown field": "{\n  \"version\": \"\",\n  \"extra\": 1,\n  \"assets\": {}\n}\n",
		"http url":      "{\n  \"version\": \"v\",\n  \"tag\": \"v\",\n  \"source_digest\": \"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\",\n  \"assets\": {\n    \"a_linux_amd64\": {\"sha256\": \"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\", \"url\": \"http://x/a\"}\n  }\n}\n",
		"no assets":     "{\n  \"version\": \"\",\n  \"tag\": \"\",\n  \"source_digest\": \"\"\n}\n",
	} {
		assert.Error(t, Check([]byte(doc)), name)
	}
}
