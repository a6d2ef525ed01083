package policy_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/policy"
)

// TestEveryCodeIsDocumented: docs/enrollment.md names every finding code
// the analyzer and the lock repository audits can report, in a table row.
func TestEveryCodeIsDocumented(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "enrollment.md"))
	require.NoError(t, err)
	doc := string(b)
	for _, c := range append(policy.ConsumerCodes(), policy.LockRepositoryCodes()...) {
		assert.True(t, strings.Contains(doc, "| `"+string(c)+"` |") || strings.Contains(doc, "`"+string(c)+"`, ") || strings.Contains(doc, ", `"+string(c)+"`"),
			"docs/enrollment.md has no row for %s", c)
		assert.NotEmpty(t, policy.Hint(c), c)
	}
}
