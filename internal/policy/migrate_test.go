package policy_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v4"
	"pgregory.net/rapid"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/policy"
)

// dedent removes the common indentation of a snippet.
func dedent(s string) (string, int) {
	min := -1
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, " "))
		if min < 0 || n < min {
			min = n
		}
	}
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if len(l) >= min {
			l = l[min:]
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n"), min
}

func snippetNode(t *testing.T, s string) *yaml.Node {
	t.Helper()
	body, _ := dedent(s)
	var doc yaml.Node
	require.NoError(t, yaml.Unmarshal([]byte(body), &doc), "snippet:\n%s", s)
	return doc.Content[0]
}

func mapValue(n *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// applyPlan applies a migration to one workflow the way a person would
// paste each snippet at its place (on the YAML tree).
func applyPlan(t *testing.T, src string, steps []policy.MigrationStep) string {
	t.Helper()
	var doc yaml.Node
	require.NoError(t, yaml.Unmarshal([]byte(src), &doc))
	jobs := mapValue(doc.Content[0], "jobs")
	for _, st := range steps {
		switch st.Kind {
		case policy.MigrateFirstStep:
			steps := mapValue(mapValue(jobs, st.Job), "steps")
			seq := snippetNode(t, st.YAML)
			require.Equal(t, yaml.SequenceNode, seq.Kind)
			steps.Content = append(append([]*yaml.Node{}, seq.Content...), steps.Content...)
		case policy.MigrateStepInputs:
			step := mapValue(mapValue(jobs, st.Job), "steps").Content[st.StepIndex]
			with := mapValue(step, "with")
			require.NotNil(t, with)
			with.Content = append(with.Content, snippetNode(t, st.YAML).Content...)
		case policy.MigrateJob:
			m := snippetNode(t, st.YAML)
			require.Len(t, m.Content, 2)
			assert.Equal(t, st.Job, m.Content[0].Value)
			at := len(jobs.Content)
			for i := 0; i+1 < len(jobs.Content); i += 2 {
				if jobs.Content[i].Value == st.After {
					at = i + 2
				}
			}
			jobs.Content = append(jobs.Content[:at], append(m.Content, jobs.Content[at:]...)...)
		case policy.MigrateNeeds:
			job := mapValue(jobs, st.Job)
			needs := mapValue(job, "needs")
			if needs.Kind == yaml.ScalarNode {
				*needs = yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{{Kind: yaml.ScalarNode, Value: needs.Value}}}
			}
			for _, n := range st.Needs {
				needs.Content = append(needs.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: n})
			}
		default:
			t.Fatalf("unknown kind %q", st.Kind)
		}
	}
	out, err := yaml.Marshal(&doc)
	require.NoError(t, err)
	return string(out)
}

// TestMigrationFromTheReference: a workflow the reference accepts fails
// here for the guard, the fallback and the aggregate; the plan lists
// exactly those additions, in order, and applying them leaves no finding.
func TestMigrationFromTheReference(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("testdata", "migrate", "reference-accepted.yml"))
	require.NoError(t, err)
	src := string(b)
	snap := snapshotOf(map[string]string{wfPath: src})
	before := policy.Analyze(snap, basePolicy())
	assert.Equal(t, []policy.Code{policy.InvalidFallbackRelease, policy.MissingInitialCurrentHeadGuard,
		policy.MissingPreLockCurrentHeadGuard, policy.MissingUnityAggregate}, before.Codes())

	plan := policy.MigrationPlan(snap, basePolicy())
	assert.Empty(t, plan.Remaining, "every finding is part of the migration")
	var kinds []string
	for _, st := range plan.Steps {
		kinds = append(kinds, string(st.Kind)+" "+st.Job)
		assert.Equal(t, wfPath, st.Path)
		assert.NotEmpty(t, st.Text)
		assert.NotEmpty(t, st.Resolves)
	}
	assert.Equal(t, []string{"first-step licensed", "step-inputs licensed", "job licensed-fallback", "job unity-validation"}, kinds)
	_, ind := dedent(plan.Steps[0].YAML)
	assert.Equal(t, 6, ind, "a step at the file's step indentation")
	_, ind = dedent(plan.Steps[1].YAML)
	assert.Equal(t, 10, ind, "inputs at the with: indentation")
	_, ind = dedent(plan.Steps[2].YAML)
	assert.Equal(t, 2, ind, "a job at the jobs: indentation")
	assert.Contains(t, plan.Steps[2].YAML, "holder-id: ${{ github.repository }}:${{ github.run_id }}:licensed:${{ matrix.unity-version }}-${{ matrix.test-mode }}")
	assert.Contains(t, plan.Steps[3].YAML, "fallback-cleanup-result: ${{ needs.licensed-fallback.outputs.cleanup-result }}")
	assert.Contains(t, plan.Steps[3].Text, "in place of unity-tests")

	after := policy.Analyze(snapshotOf(map[string]string{wfPath: applyPlan(t, src, plan.Steps)}), basePolicy())
	assert.Empty(t, after.Findings, "%+v", after.Findings)
	again := policy.MigrationPlan(snapshotOf(map[string]string{wfPath: applyPlan(t, src, plan.Steps)}), basePolicy())
	assert.Empty(t, again.Steps)
}

// TestMigrationPartial: each addition is planned only when missing, a
// fallback added next to an existing aggregate is bound to it, and
// findings the migration does not cover stay to be fixed.
func TestMigrationPartial(t *testing.T) {
	t.Parallel()
	base := consumerWorkflow(t)
	fb := base[strings.Index(base, "  # Runner loss skips every step above"):strings.Index(base, "  # The one required check")]
	src := mutated(t, base,
		once(fb, ""),
		once("    needs: [static, preflight, classify, licensed, fallback-cleanup]\n", "    needs: [static, preflight, classify, licensed]\n"),
		once("          fallback-result: ${{ needs.fallback-cleanup.result }}\n          fallback-cleanup-result: ${{ needs.fallback-cleanup.outputs.cleanup-result }}", ""),
		once("  cancel-in-progress: false\n", "  cancel-in-progress: true\n"),
	)
	snap := snapshotOf(map[string]string{wfPath: src})
	plan := policy.MigrationPlan(snap, basePolicy())
	var kinds []string
	for _, st := range plan.Steps {
		kinds = append(kinds, string(st.Kind)+" "+st.Job)
	}
	assert.Equal(t, []string{"job licensed-fallback", "needs unity-validation", "step-inputs unity-validation"}, kinds)
	require.Len(t, plan.Remaining, 1)
	assert.Equal(t, policy.UnsafeWorkflowCancellation, plan.Remaining[0].Code)
	after := policy.Analyze(snapshotOf(map[string]string{wfPath: applyPlan(t, src, plan.Steps)}), basePolicy())
	assert.Equal(t, []policy.Code{policy.UnsafeWorkflowCancellation}, after.Codes(), "%+v", after.Findings)

	clean := policy.MigrationPlan(snapshotOf(map[string]string{wfPath: base}), basePolicy())
	assert.Empty(t, clean.Steps)
	assert.Empty(t, clean.Remaining)
}

// TestPropertyMigrationPlanIsComplete: whichever of the guard, acquire's
// revalidation inputs and the fallback job (with its aggregate bindings) a
// workflow lacks, applying the plan leaves it clean.
func TestPropertyMigrationPlanIsComplete(t *testing.T) {
	t.Parallel()
	base := consumerWorkflow(t)
	guard := "      - name: Require current PR head\n        uses: Ambiguous-Interactive/ambiguous-organization-build-lock/.github/actions/require-current-pr-head@0000000000000000000000000000000000000000\n        with:\n          github-token: ${{ github.token }}\n          pull-request-number: ${{ github.event.pull_request.number }}\n          expected-head-sha: ${{ github.event.pull_request.head.sha }}\n\n      - name: Require manually installed Unity editor"
	inputs := "          runner-id: ${{ runner.name }}\n          github-token: ${{ github.token }}\n          pull-request-number: ${{ github.event.pull_request.number }}\n          expected-head-sha: ${{ github.event.pull_request.head.sha }}\n"
	fb := base[strings.Index(base, "  # Runner loss skips every step above"):strings.Index(base, "  # The one required check")]
	removals := [][]edit{
		{once(guard, "      - name: Require manually installed Unity editor")},
		{once(inputs, "          runner-id: ${{ runner.name }}\n")},
		{once(fb, ""), once("licensed, fallback-cleanup]", "licensed]"),
			once("          fallback-result: ${{ needs.fallback-cleanup.result }}\n          fallback-cleanup-result: ${{ needs.fallback-cleanup.outputs.cleanup-result }}", "")},
	}
	rapid.Check(t, func(rt *rapid.T) {
		var edits []edit
		for i, r := range removals {
			if rapid.Bool().Draw(rt, "remove"+string(rune('0'+i))) {
				edits = append(edits, r...)
			}
		}
		src := mutated(t, base, edits...)
		plan := policy.MigrationPlan(snapshotOf(map[string]string{wfPath: src}), basePolicy())
		require.Empty(rt, plan.Remaining)
		after := policy.Analyze(snapshotOf(map[string]string{wfPath: applyPlan(t, src, plan.Steps)}), basePolicy())
		require.Empty(rt, after.Findings, "%+v", after.Findings)
		require.Equal(rt, len(edits) == 0, len(plan.Steps) == 0)
	})
}
