//go:build linux

package machineid

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSystemOnThisMachine reads this machine's real id: stable across
// reads, different per repository.
func TestSystemOnThisMachine(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat(EtcMachineID); err != nil {
		if _, err := os.Stat(DBusMachineID); err != nil {
			t.Skip("no machine id file on this machine (a container without one)")
		}
	}
	a, err := ForRepository(context.Background(), System(), 7)
	require.NoError(t, err)
	b, err := ForRepository(context.Background(), System(), 7)
	require.NoError(t, err)
	c, err := ForRepository(context.Background(), System(), 8)
	require.NoError(t, err)
	assert.Equal(t, a, b)
	assert.NotEqual(t, a.Hash, c.Hash)
	raw, err := os.ReadFile(a.Source)
	require.NoError(t, err)
	assert.NotContains(t, string(raw), a.Hash)
}
