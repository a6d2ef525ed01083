package actioncontract_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// TestReadmeNamedSeatsConfigIsValid: the README's named-seats config
// decodes without a warning into three seats (maxHolders from their
// count), and every secret it tells the reader to create is the prefix
// plus the seat's secret suffix.
func TestReadmeNamedSeatsConfigIsValid(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(readme), "### Several licenses: named seats, seat labels and priority\n")
	require.True(t, ok, "README.md has no named-seats section")
	_, after, ok := strings.Cut(section, "```json\n")
	require.True(t, ok)
	doc, _, ok := strings.Cut(after, "```")
	require.True(t, ok)
	cfg, warnings := lockstate.DecodeConfig([]byte(doc))
	require.Empty(t, warnings)
	require.Equal(t, 3, cfg.Seats.Len())
	assert.Equal(t, 3, cfg.MaxHolders)
	assert.Equal(t, 9, cfg.Priority.Max)
	for _, s := range cfg.Seats.List() {
		assert.Contains(t, section, "`UNITY_SERIAL_"+lockstate.SeatSecretSuffix(s.Name)+"`", s.Name)
	}
}
