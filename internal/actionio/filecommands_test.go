package actionio_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
)

func TestReadFileCommandsRoundTripsSetOutput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "output")
	env := map[string]string{"GITHUB_OUTPUT": out}
	a := actionio.New(func(k string) string { return env[k] }, new(discard))
	require.NoError(t, a.SetOutput("acquired", "true"))
	require.NoError(t, a.SetOutput("multi", "line one\nline two"))
	require.NoError(t, a.SetOutput("acquired", "false"))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "plain"), []byte("a=1\nb=x=y\n"), 0o600))

	got, err := actionio.ReadFileCommands(out)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"acquired": "false", "multi": "line one\nline two"}, got)
	got, err = actionio.ReadFileCommands(filepath.Join(dir, "plain"))
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"a": "1", "b": "x=y"}, got)
	got, err = actionio.ReadFileCommands(filepath.Join(dir, "missing"))
	require.NoError(t, err)
	assert.Empty(t, got)
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
