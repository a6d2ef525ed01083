package ensureeditor_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/editor"
)

// TestBinaryMatchesItsActionContract: a full run reads exactly the inputs
// action.yml declares and writes exactly its outputs.
func TestBinaryMatchesItsActionContract(t *testing.T) {
	t.Parallel()
	f := newFixture(t, editor.LayoutCanonical)
	require.NoError(t, f.run())
	f.r.AssertContract(t, "ensure-unity-editor")
}
