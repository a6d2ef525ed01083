package cleanupgate_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBinaryMatchesItsActionContract: a full run reads exactly the inputs
// action.yml declares and writes exactly its outputs.
func TestBinaryMatchesItsActionContract(t *testing.T) {
	t.Parallel()
	r, _, err := gate(t, safeCooldown())
	require.NoError(t, err)
	r.AssertContract(t, "require-confirmed-unity-cleanup")
}
