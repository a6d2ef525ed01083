package returnlicense_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBinaryMatchesItsActionContract: a full run reads exactly the inputs
// action.yml declares and writes exactly its outputs.
func TestBinaryMatchesItsActionContract(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "clean")
	require.NoError(t, f.run())
	f.r.AssertContract(t, "return-unity-license")
}
