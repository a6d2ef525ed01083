package actioncontract_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actioncontract"
)

func misplaced(t *testing.T, src string) []string {
	t.Helper()
	found, err := actioncontract.MisplacedExpressions([]byte(src))
	require.NoError(t, err)
	out := make([]string, 0, len(found))
	for _, f := range found {
		out = append(out, f.String())
	}
	return out
}

// TestNoExpressionsInActionMetadata is the contract: no action.yml of this
// repository has `${{` outside runs:, outputs.<id>.value and
// inputs.<id>.default (GitHub refuses to load it; see expressions.go).
func TestNoExpressionsInActionMetadata(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join(repoRoot, ".github", "actions", "*", "action.yml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		found, err := actioncontract.MisplacedExpressions(src)
		require.NoError(t, err, f)
		assert.Empty(t, found, "%s: ${{ }} outside runs:, outputs.<id>.value and inputs.<id>.default; GitHub refuses to load the action", f)
	}
}

// The acquire action.yml from before commit e27ce35, which GitHub refused
// ("Unrecognized named-value: 'runner'"): the contract refuses it at the same
// line and column as GitHub's parser (tools/workflow-parser/check.test.mjs).
func TestMisplacedExpressionsRefusesTheOldAcquireAction(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile(filepath.Join(repoRoot, "tools", "workflow-parser", "testdata", "acquire-build-lock-before-e27ce35.action.yml"))
	require.NoError(t, err)
	assert.Equal(t, []string{"inputs.runner-id.description (line 14, column 18)"}, misplaced(t, string(src)))
}

func TestMisplacedExpressionsEveryPlace(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile(filepath.Join("testdata", "expressions", "misplaced.action.yml"))
	require.NoError(t, err)
	assert.Equal(t, []string{
		"name (line 4, column 7)",
		"description (line 5, column 14)",
		"author (line 6, column 9)",
		"branding.color (line 9, column 10)",
		"inputs.runner-id.description (line 12, column 18)",
		"inputs.token.deprecationMessage (line 19, column 25)",
		"inputs.reused.description (line 21, column 18)",
		"outputs.acquired.description (line 26, column 18)",
	}, misplaced(t, string(src)))
}

func TestMisplacedExpressionsCases(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, src string
		want      []string
	}{
		{"allowed places only", "name: n\ndescription: d\ninputs:\n  a:\n    description: d\n    default: ${{ github.token }}\noutputs:\n  o:\n    description: d\n    value: ${{ steps.s.outputs.o }}\nruns:\n  using: composite\n  steps:\n    - if: ${{ always() }}\n      run: echo\n", []string{}},
		{"no expressions", "name: n\ndescription: plain $ and {{ braces }}\n", []string{}},
		{"a key holding an expression", "name: n\ninputs:\n  ${{ x }}:\n    description: d\n", []string{"inputs.${{ x }} (line 3, column 3)"}},
		{"a root key", "${{ x }}: 1\n", []string{"${{ x }} (line 1, column 1)"}},
		{"a value under an unknown key", "name: n\nextra:\n  - a\n  - ${{ x }}\n", []string{"extra[1] (line 4, column 5)"}},
		{"a default under outputs is not allowed", "outputs:\n  o:\n    default: ${{ x }}\n", []string{"outputs.o.default (line 3, column 14)"}},
		{"a value under inputs is not allowed", "inputs:\n  i:\n    value: ${{ x }}\n", []string{"inputs.i.value (line 3, column 12)"}},
		{"a scalar member", "inputs:\n  i: ${{ x }}\n", []string{"inputs.i (line 2, column 6)"}},
		{"unclosed expression start", "description: 'costs ${{'\n", []string{"description (line 1, column 14)"}},
		{"a block scalar description", "description: |\n  one\n  ${{ runner.name }}\n", []string{"description (line 1, column 14)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tc.want, misplaced(t, tc.src))
		})
	}
}

func TestMisplacedExpressionsRefusesNonMappings(t *testing.T) {
	t.Parallel()
	for _, src := range []string{"", "- a\n", "just a string\n", "a: [\n"} {
		_, err := actioncontract.MisplacedExpressions([]byte(src))
		assert.Error(t, err, "%q", src)
	}
}
