package check_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/policy"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/policy/check"
)

func now() time.Time { return time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC) }

func checkout(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, c := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(c), 0o644))
	}
	return root
}

func consumer(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "corpus", "consumer-workflow.yml"))
	require.NoError(t, err)
	return string(b)
}

func run(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := check.Main(context.Background(), args, &out, &errOut, now)
	return out.String(), errOut.String(), err
}

func TestCheckCleanAndDrift(t *testing.T) {
	t.Parallel()
	good := consumer(t)
	out, _, err := run(t, checkout(t, map[string]string{".github/workflows/unity.yml": good}))
	require.NoError(t, err)
	assert.Empty(t, out)

	bad := strings.Replace(good, "  cancel-in-progress: false\n", "  cancel-in-progress: true\n", 1)
	bad = strings.Replace(bad, "actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683 # v4.2.2\n        with:\n          persist-credentials: false\n      - name: Lint", "actions/checkout@v4\n        with:\n          persist-credentials: false\n      - name: Lint", 1)
	root := checkout(t, map[string]string{".github/workflows/unity.yml": bad})
	out, _, err = run(t, root)
	assert.ErrorIs(t, err, check.ErrFindings)
	assert.Equal(t, ".github/workflows/unity.yml:15: unsafe-workflow-cancellation: "+policy.Hint(policy.UnsafeWorkflowCancellation)+"\n"+
		".github/workflows/unity.yml:26: mutable-action-ref: "+policy.Hint(policy.MutableActionRef)+" [job static]\n", out)

	out, _, err = run(t, "--json", root)
	assert.ErrorIs(t, err, check.ErrFindings)
	var doc check.Output
	require.NoError(t, json.Unmarshal([]byte(out), &doc))
	require.Len(t, doc.Findings, 2)
	assert.Equal(t, policy.UnsafeWorkflowCancellation, doc.Findings[0].Code)
	assert.Equal(t, policy.Hint(policy.UnsafeWorkflowCancellation), doc.Findings[0].Hint)
	assert.NotEmpty(t, doc.Inventory)
}

func TestCheckWithRegistry(t *testing.T) {
	t.Parallel()
	reg := `{"schemaVersion":1,"organization":"acme","approvedLockShas":["1111111111111111111111111111111111111111"],"approvedReturnShas":[],
"repositories":[{"repository":"acme/game","defaultBranch":"main","fork":false,"allowWorkflowDispatch":false}],"exceptions":[]}`
	root := checkout(t, map[string]string{".github/workflows/unity.yml": consumer(t), "policy.json": reg})
	_, _, err := run(t, root)
	require.NoError(t, err, "without a registry pins are checked for shape only")
	out, _, err := run(t, "--registry", filepath.Join(root, "policy.json"), "--repository", "acme/game", root)
	assert.ErrorIs(t, err, check.ErrFindings)
	assert.Contains(t, out, "unapproved-acquire-ref")
	assert.Contains(t, out, "unapproved-lock-ref")
	_, _, err = run(t, "--registry", filepath.Join(root, "missing.json"), root)
	assert.ErrorIs(t, err, check.ErrUsage)
	_, _, err = run(t, "--registry", filepath.Join(root, ".github", "workflows", "unity.yml"), root)
	assert.ErrorIs(t, err, check.ErrUsage, "an invalid registry is a usage error")
}

func TestCheckLockRepositoryAudit(t *testing.T) {
	t.Parallel()
	root := checkout(t, map[string]string{".github/workflows/ci.yml": "on: push\npermissions: {}\njobs:\n  a:\n    runs-on: ubuntu-latest\n    timeout-minutes: 5\n    steps:\n      - run: echo \"${{ github.event.head_commit.message }}\"\n"})
	out, _, err := run(t, "--lock-repository-audit", root)
	assert.ErrorIs(t, err, check.ErrFindings)
	assert.Equal(t, ".github/workflows/ci.yml:8: expression-in-run: "+policy.Hint(policy.ExpressionInRun)+" [job a]\n", out)
}

func TestCheckUsage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"a", "b"}, {"--lock-repository", "nope", "."}, {"--bogus"}, {filepath.Join(t.TempDir(), "x")}} {
		_, _, err := run(t, args...)
		assert.ErrorIs(t, err, check.ErrUsage, "%q", args)
	}
}

func TestLine(t *testing.T) {
	t.Parallel()
	assert.Equal(t, ".: repository-retrieval-incomplete: "+policy.Hint(policy.RepositoryRetrievalIncomplete)+" [tree-truncated]",
		check.Line(policy.Finding{Code: policy.RepositoryRetrievalIncomplete, Detail: "tree-truncated"}))
}
