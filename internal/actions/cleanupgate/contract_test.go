package cleanupgate_test

import (
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actioncontract"
)

// TestBinaryMatchesItsActionContract: a full run reads exactly the inputs
// action.yml declares and writes exactly its outputs.
func TestBinaryMatchesItsActionContract(t *testing.T) {
	t.Parallel()
	reg := actioncontract.Registry["require-confirmed-unity-cleanup"]
	r, _, err := gate(t, safeCooldown())
	require.NoError(t, err)
	assert.Equal(t, slices.Sorted(slices.Values(reg.Inputs)), r.InputsRead())
	assert.Equal(t, slices.Sorted(slices.Values(reg.Outputs)), slices.Sorted(maps.Keys(r.Outputs())))
}
