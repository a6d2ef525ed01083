package policy_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rhysd/actionlint"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v4"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/policy"
)

// FuzzAnalyze: arbitrary bytes as a workflow never panic, and a file that
// does not even parse as YAML, or that actionlint returns no workflow for,
// is never a clean result.
func FuzzAnalyze(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "corpus", "*.yml"))
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		require.NoError(f, err)
		f.Add(b)
	}
	for _, s := range []string{"", "on: push", "on: [push\njobs: {", "jobs: {a: {runs-on: x, steps: [{uses: ./a}]}}\non: push",
		"on: push\njobs:\n  a:\n    uses: ./.github/workflows/a.yml\n", "concurrency: {cancel-in-progress: \"false \"}\non: push\njobs: {a: {runs-on: x, steps: [{run: x}]}}",
		"- a\n- b", "on: push\njobs: &a {b: *a}", "%YAML 1.1\n---\non: push"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		snap := policy.Snapshot{Repository: "acme/game", Files: map[string][]byte{".github/workflows/f.yml": data,
			".github/workflows/a.yml": data, ".github/actions/a/action.yml": data}}
		pol := policy.Policy{LockRepository: "acme/lock", ApprovedLockShas: []string{strings.Repeat("a", 40)}}
		res := policy.Analyze(snap, pol)
		again := policy.Analyze(snap, pol)
		require.Equal(t, res, again, "deterministic")
		var n yaml.Node
		yamlErr := yaml.Unmarshal(data, &n)
		wf, _ := actionlint.Parse(data)
		if yamlErr != nil || wf == nil {
			require.False(t, res.Clean(), "an unparseable workflow must be a finding")
			found := false
			for _, fd := range res.Findings {
				if fd.Code == policy.RepositoryAnalysisIncomplete && fd.Path == ".github/workflows/f.yml" {
					found = true
				}
			}
			require.True(t, found, "findings: %+v", res.Findings)
		}
		_ = policy.References(snap)
		plan := policy.MigrationPlan(snap, pol)
		require.Equal(t, plan, policy.MigrationPlan(snap, pol), "the plan is deterministic")
		require.Equal(t, res, plan.Result)
	})
}
