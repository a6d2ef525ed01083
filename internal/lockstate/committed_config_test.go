package lockstate

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCommittedLockConfigsAreWellFormed lints every locks/*.config.json in
// the repository: it must decode without a single fallback warning, so what
// is reviewed is exactly what runs.
func TestCommittedLockConfigsAreWellFormed(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("..", "..", "locks", "*.config.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "locks/ must carry at least the documented example")
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		cfg, warnings := DecodeConfig(data)
		assert.Empty(t, warnings, "%s", f)
		assert.GreaterOrEqual(t, cfg.MaxHolders, 1, "%s", f)
	}
}
