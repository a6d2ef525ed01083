package cleanupevidence_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actioncontract"
)

// TestBinaryMatchesItsActionContract: a full run reads exactly the inputs
// action.yml declares and writes exactly its outputs, and the action runs
// the classify binary in this mode.
func TestBinaryMatchesItsActionContract(t *testing.T) {
	t.Parallel()
	reg := actioncontract.Registry["classify-unity-cleanup-evidence"]
	assert.Equal(t, "classify", reg.Binary)
	assert.Equal(t, []string{"cleanup-evidence"}, reg.Args)
	f := newFixture(t, positive, "0")
	require.NoError(t, f.run())
	f.r.AssertContract(t, "classify-unity-cleanup-evidence")
}
