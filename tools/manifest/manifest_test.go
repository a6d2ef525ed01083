package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCommittedManifestIsCanonical(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("..", "..", ".github", "dist", "manifest.json"))
	require.NoError(t, err)
	require.NoError(t, Check(b))
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
