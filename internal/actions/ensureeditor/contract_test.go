package ensureeditor_test

import (
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actioncontract"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/editor"
)

// TestBinaryMatchesItsActionContract: a full run reads exactly the inputs
// action.yml declares and writes exactly its outputs.
func TestBinaryMatchesItsActionContract(t *testing.T) {
	t.Parallel()
	reg := actioncontract.Registry["ensure-unity-editor"]
	f := newFixture(t, editor.LayoutCanonical)
	require.NoError(t, f.run())
	assert.Equal(t, slices.Sorted(slices.Values(reg.Inputs)), f.r.InputsRead())
	assert.Equal(t, slices.Sorted(slices.Values(reg.Outputs)), slices.Sorted(maps.Keys(f.r.Outputs())))
}
