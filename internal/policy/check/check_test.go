package check_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
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

// TestCheckPathForms: what `policy check PATH` accepts, and how findings
// name the file.
func TestCheckPathForms(t *testing.T) {
	t.Parallel()
	good := consumer(t)
	bad := strings.Replace(good, "  cancel-in-progress: false\n", "  cancel-in-progress: true\n", 1)
	root := checkout(t, map[string]string{".github/workflows/unity.yml": bad, "docs/examples/a.yml": bad, "docs/examples/b.yaml": good,
		"docs/examples/notes.md": "x", "docs/other/readme.md": "x", ".git/HEAD": "ref: refs/heads/main\n"})
	tests := []struct {
		name, arg, wantPath string
		checked             int
	}{
		{"repository root", root, ".github/workflows/unity.yml", 1},
		{"workflows directory", filepath.Join(root, ".github", "workflows"), ".github/workflows/unity.yml", 1},
		{"one file", filepath.Join(root, "docs", "examples", "a.yml"), filepath.ToSlash(filepath.Join(root, "docs", "examples", "a.yml")), 1},
		{"a folder of yml files", filepath.Join(root, "docs", "examples"), filepath.ToSlash(filepath.Join(root, "docs", "examples", "a.yml")), 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out, errOut, err := run(t, tc.arg)
			assert.ErrorIs(t, err, check.ErrFindings)
			assert.Equal(t, tc.wantPath+":15: unsafe-workflow-cancellation: "+policy.Hint(policy.UnsafeWorkflowCancellation)+"\n", out)
			assert.Contains(t, errOut, fmt.Sprintf("%d workflows checked, 1 findings", tc.checked))
			out, _, err = run(t, "--json", tc.arg)
			assert.ErrorIs(t, err, check.ErrFindings)
			var doc check.Output
			require.NoError(t, json.Unmarshal([]byte(out), &doc))
			assert.Equal(t, tc.checked, doc.WorkflowsChecked)
		})
	}
	for _, arg := range []string{filepath.Join(root, "docs", "other"), t.TempDir()} {
		_, _, err := run(t, arg)
		assert.ErrorIs(t, err, check.ErrUsage)
		assert.ErrorContains(t, err, "0 workflows checked")
	}
	_, _, err := run(t, filepath.Join(root, "docs", "examples", "notes.md"))
	assert.ErrorIs(t, err, check.ErrUsage, "a file that is not YAML")
}

// TestCheckDocsExamples: the consumer example checks clean as a newcomer
// would run it, from the repository root.
func TestCheckDocsExamples(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("..", "..", "..", "docs", "examples")
	out, errOut, err := run(t, dir)
	require.NoError(t, err, out)
	assert.Empty(t, out)
	assert.Contains(t, errOut, "1 workflows checked, 0 findings")
	out, _, err = run(t, filepath.Join(dir, "consumer-workflow.yml"))
	require.NoError(t, err, out)
}

// TestCheckEscapesHostileNames: a workflow file name or job id holding a
// newline and a workflow command is printed as one escaped line; nothing
// on stdout starts a workflow command.
func TestCheckEscapesHostileNames(t *testing.T) {
	t.Parallel()
	wf := "on: push\npermissions: write-all\njobs:\n  \"x\\n::error title=pwned::owned\":\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ok\n"
	root := checkout(t, map[string]string{".github/workflows/ok.yml": "on: push\njobs: {a: {runs-on: ubuntu-latest, steps: [{run: x}]}}\n"})
	name := "evil\n::add-mask::x%0A.yml"
	require.NoError(t, os.WriteFile(filepath.Join(root, ".github", "workflows", name), []byte(wf), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, ".github", "workflows", "job.yml"), []byte(strings.Replace(wf, "permissions: write-all", "permissions: {}", 1)+
		"      - run: echo ${{ secrets.X }}\n"), 0o644))
	out, errOut, err := run(t, root)
	assert.ErrorIs(t, err, check.ErrFindings)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, lines, 2, out)
	for _, l := range append(lines, strings.Split(errOut, "\n")...) {
		assert.False(t, strings.HasPrefix(strings.TrimLeft(l, " "), "::"), "a line starts a workflow command: %q", l)
	}
	assert.Contains(t, out, ".github/workflows/evil%0A::add-mask::x%250A.yml:2: excessive-permissions")
	assert.Contains(t, out, "[job x%0A::error title=pwned::owned]")
}

// TestCheckLockRepositoryAuditGaps: a symlinked workflow, a symlinked
// composite action.yml carrying a secret in run: and a file over 1 MiB are
// findings with their own codes (they were skipped, or a usage error).
func TestCheckLockRepositoryAuditGaps(t *testing.T) {
	t.Parallel()
	ok := "on: push\npermissions: {}\njobs:\n  a:\n    runs-on: ubuntu-latest\n    timeout-minutes: 5\n    steps:\n      - run: echo ok\n"
	root := checkout(t, map[string]string{
		".github/workflows/ci.yml":    ok,
		"elsewhere/wf.yml":            ok,
		"elsewhere/action/action.yml": "name: x\ndescription: x\nruns:\n  using: composite\n  steps:\n    - run: echo ${{ github.token }}\n      shell: bash\n",
		".github/workflows/big.yml":   ok + "# " + strings.Repeat("x", 1<<20) + "\n",
	})
	require.NoError(t, os.Symlink(filepath.Join(root, "elsewhere", "wf.yml"), filepath.Join(root, ".github", "workflows", "linked.yml")))
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".github", "actions", "x"), 0o755))
	require.NoError(t, os.Symlink(filepath.Join(root, "elsewhere", "action", "action.yml"), filepath.Join(root, ".github", "actions", "x", "action.yml")))
	out, errOut, err := run(t, "--lock-repository-audit", root)
	assert.ErrorIs(t, err, check.ErrFindings)
	assert.Equal(t, ".github/actions/x/action.yml: symlinked-file: "+policy.Hint(policy.SymlinkedFile)+"\n"+
		".github/workflows/big.yml: oversized-file: "+policy.Hint(policy.OversizedFile)+"\n"+
		".github/workflows/linked.yml: symlinked-file: "+policy.Hint(policy.SymlinkedFile)+"\n", out)
	assert.Contains(t, errOut, "4 files checked, 3 findings")
}

// TestCheckFromReference: for a workflow the reference accepts, the
// migration report lists exactly what to add, in order, with the YAML.
func TestCheckFromReference(t *testing.T) {
	t.Parallel()
	ref, err := os.ReadFile(filepath.Join("..", "testdata", "migrate", "reference-accepted.yml"))
	require.NoError(t, err)
	root := checkout(t, map[string]string{".github/workflows/unity.yml": string(ref)})
	out, errOut, err := run(t, "--from-reference", root)
	assert.ErrorIs(t, err, check.ErrFindings)
	assert.ErrorContains(t, err, "4 additions to make, 0 other findings")
	assert.True(t, strings.HasPrefix(out, "Migration from the reference pattern: 4 additions, in this order.\n\n"+
		"1. .github/workflows/unity.yml: add the current-PR-head guard as the first step of job licensed"), out)
	var order []int
	for _, want := range []string{"\n1. ", "\n2. ", "\n3. ", "\n4. "} {
		order = append(order, strings.Index(out, want))
	}
	assert.IsIncreasing(t, order)
	assert.Contains(t, out, "\n      - name: Require current PR head\n")
	assert.Contains(t, out, "\n  licensed-fallback:\n")
	assert.Contains(t, out, "\n  unity-validation:\n")
	assert.NotContains(t, out, "Other findings")
	assert.Contains(t, errOut, "4 additions to migrate from the reference")

	out, _, err = run(t, "--from-reference", "--json", root)
	assert.ErrorIs(t, err, check.ErrFindings)
	var doc check.Output
	require.NoError(t, json.Unmarshal([]byte(out), &doc))
	require.Len(t, doc.Migration, 4)
	assert.Empty(t, doc.Findings)
	assert.Equal(t, policy.MigrateJob, doc.Migration[3].Kind)

	clean := checkout(t, map[string]string{".github/workflows/unity.yml": consumer(t)})
	out, _, err = run(t, "--from-reference", clean)
	require.NoError(t, err)
	assert.Equal(t, "Nothing to migrate: every workflow passes the policy.\n", out)

	_, _, err = run(t, "--from-reference", "--lock-repository-audit", clean)
	assert.ErrorIs(t, err, check.ErrUsage)
}
