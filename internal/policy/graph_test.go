package policy_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/policy"
)

// TestGraphCyclesTerminate: composite actions and reusable workflows that
// refer to each other in a cycle are analyzed once, without looping.
func TestGraphCyclesTerminate(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		".github/workflows/a.yml":      "on: push\njobs:\n  a:\n    uses: ./.github/workflows/b.yml\n  c:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: ./.github/actions/x\n",
		".github/workflows/b.yml":      "on: workflow_call\njobs:\n  b:\n    uses: ./.github/workflows/a.yml\n",
		".github/actions/x/action.yml": "name: x\ndescription: x\nruns:\n  using: composite\n  steps:\n    - uses: ./.github/actions/y\n",
		".github/actions/y/action.yml": "name: y\ndescription: y\nruns:\n  using: composite\n  steps:\n    - uses: ./.github/actions/x\n    - uses: actions/cache@v4\n",
	}
	snap := snapshotOf(files)
	assert.Empty(t, policy.References(snap))
	res := policy.Analyze(snap, basePolicy())
	assert.Equal(t, []policy.Code{policy.MutableActionRef}, res.Codes(), "%+v", res.Findings)
	assert.Equal(t, ".github/actions/y/action.yml", res.Findings[0].Path, "a finding inside a composite names the composite")
}

// TestReferencesListsWhatIsMissing: what a reader still has to fetch.
func TestReferencesListsWhatIsMissing(t *testing.T) {
	t.Parallel()
	wf := "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: ./.github/actions/x\n      - uses: ./tools/act\n" +
		"  b:\n    uses: ./.github/workflows/shared.yml\n" +
		"  c:\n    uses: acme/shared/.github/workflows/r.yml@0123456789abcdef0123456789abcdef01234567\n" +
		"  d:\n    uses: acme/shared/.github/workflows/r.yml@main\n"
	needs := policy.References(snapshotOf(map[string]string{".github/workflows/ci.yml": wf}))
	assert.Equal(t, []policy.Need{
		{Kind: policy.NeedLocalAction, Path: ".github/actions/x"},
		{Kind: policy.NeedLocalAction, Path: "tools/act"},
		{Kind: policy.NeedLocalWorkflow, Path: ".github/workflows/shared.yml"},
		{Kind: policy.NeedRemoteWorkflow, Ref: "acme/shared/.github/workflows/r.yml@0123456789abcdef0123456789abcdef01234567",
			Owner: "acme", Repo: "shared", Commit: "0123456789abcdef0123456789abcdef01234567", RemotePath: ".github/workflows/r.yml"},
	}, needs, "a mutable remote reference is a finding, never fetched")
}
