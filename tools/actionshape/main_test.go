package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRewritesTheOldShape: an action.yml in the old one-bash-step shape
// (testdata: require-current-pr-head before the conversion) is reported,
// then rewritten byte for byte into the committed canonical file, and is
// then in the shape.
func TestRewritesTheOldShape(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	dir := filepath.Join(root, ".github", "actions", "require-current-pr-head")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	old, err := os.ReadFile(filepath.Join("testdata", "old-shape.action.yml"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "action.yml"), old, 0o644))

	var out strings.Builder
	err = run(nil, root, &out)
	assert.ErrorContains(t, err, "require-current-pr-head")
	assert.ErrorContains(t, err, "go run ./tools/actionshape -w")

	require.NoError(t, run([]string{"-w"}, root, &out))
	assert.Contains(t, out.String(), "rewrote")
	got, err := os.ReadFile(filepath.Join(dir, "action.yml"))
	require.NoError(t, err)
	want, err := os.ReadFile(filepath.Join("..", "..", ".github", "actions", "require-current-pr-head", "action.yml"))
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got))
	require.NoError(t, run(nil, root, &out), "a rewritten action is in the shape")
}

func TestRefusesAnUnregisteredAction(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	dir := filepath.Join(root, ".github", "actions", "not-registered")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "action.yml"), []byte("name: x\ndescription: y\nruns:\n  using: composite\n  steps: []\n"), 0o644))
	var out strings.Builder
	assert.ErrorContains(t, run(nil, root, &out), "registry.go")
}
