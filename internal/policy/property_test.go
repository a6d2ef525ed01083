package policy_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v4"
	"pgregory.net/rapid"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/policy"
)

// TestPropertyRemovingALockStepIsNeverClean: deleting any one required
// lock-action step of the consumer pattern (the licensed job's guard,
// editor gate, acquire, return, classifier, release and cleanup gate, the
// fallback release, the runner preflight, the aggregate) always leaves at
// least one finding. The preflight job's own guard and the license-secret
// check are optional, so they are not drawn.
func TestPropertyRemovingALockStepIsNeverClean(t *testing.T) {
	t.Parallel()
	base := consumerWorkflow(t)
	var doc yaml.Node
	require.NoError(t, yaml.Unmarshal([]byte(base), &doc))
	type loc struct{ job, step int }
	var locks []loc
	jobs := doc.Content[0].Content
	var jobsNode *yaml.Node
	for i := 0; i+1 < len(jobs); i += 2 {
		if jobs[i].Value == "jobs" {
			jobsNode = jobs[i+1]
		}
	}
	require.NotNil(t, jobsNode)
	for ji := 1; ji < len(jobsNode.Content); ji += 2 {
		var steps *yaml.Node
		for k := 0; k+1 < len(jobsNode.Content[ji].Content); k += 2 {
			if jobsNode.Content[ji].Content[k].Value == "steps" {
				steps = jobsNode.Content[ji].Content[k+1]
			}
		}
		for si, st := range steps.Content {
			for k := 0; k+1 < len(st.Content); k += 2 {
				v := st.Content[k+1].Value
				optional := strings.Contains(v, "/validate-unity-license@") || strings.Contains(v, "/classify-unity-changes@") ||
					(strings.Contains(v, "/require-current-pr-head@") && jobsNode.Content[ji-1].Value != "licensed")
				if st.Content[k].Value == "uses" && strings.HasPrefix(v, lockRepo+"/") && !optional {
					locks = append(locks, loc{ji, si})
				}
			}
		}
	}
	require.Len(t, locks, 10)
	rapid.Check(t, func(rt *rapid.T) {
		l := rapid.SampledFrom(locks).Draw(rt, "step")
		var d yaml.Node
		require.NoError(rt, yaml.Unmarshal([]byte(base), &d))
		var jn *yaml.Node
		for i := 0; i+1 < len(d.Content[0].Content); i += 2 {
			if d.Content[0].Content[i].Value == "jobs" {
				jn = d.Content[0].Content[i+1]
			}
		}
		job := jn.Content[l.job]
		for k := 0; k+1 < len(job.Content); k += 2 {
			if job.Content[k].Value == "steps" {
				s := job.Content[k+1]
				s.Content = append(s.Content[:l.step:l.step], s.Content[l.step+1:]...)
			}
		}
		out, err := yaml.Marshal(&d)
		require.NoError(rt, err)
		res := policy.Analyze(snapshotOf(map[string]string{wfPath: string(out)}), basePolicy())
		require.False(rt, res.Clean(), "removing step %d of job %s left a clean result", l.step, jn.Content[l.job-1].Value)
	})
}

// TestPropertyFileOrderDoesNotMatter: the result does not depend on how
// files are named or in which order they are added.
func TestPropertyFileOrderDoesNotMatter(t *testing.T) {
	t.Parallel()
	base := consumerWorkflow(t)
	rapid.Check(t, func(rt *rapid.T) {
		names := rapid.SliceOfNDistinct(rapid.StringMatching(`[a-z]{1,8}`), 1, 4, rapid.ID[string]).Draw(rt, "names")
		files := map[string]string{}
		for _, n := range names {
			files[".github/workflows/"+n+".yml"] = base
		}
		res := policy.Analyze(snapshotOf(files), basePolicy())
		require.True(rt, res.Clean(), "%+v", res.Findings)
		require.Len(rt, res.Inventory, 6*len(names))
	})
}
