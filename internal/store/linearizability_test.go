package store_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/linearizability"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// linRecorder starts the history of the concurrent test's lock (the state
// file does not exist yet) for the linearizability check.
func linRecorder(maxHolders int) (*linearizability.Recorder, linearizability.File) {
	f := linearizability.File{Owner: owner, Repo: repo, Branch: branch, Path: statePath}
	r := linearizability.NewRecorder(nil)
	r.Track(f, &linearizability.LockRules{Lock: lockName, MaxHolders: maxHolders, MaxOvertakes: lockstate.DefaultMaxOvertakes}, nil, false)
	return r, f
}

// linActor is a test job's identity in the history.
func linActor(id lockstate.Identity) linearizability.Actor {
	return linearizability.Actor{Kind: linearizability.ActorJob, HolderID: id.HolderID, Attempt: id.RunAttempt, RunnerName: id.RunnerName}
}

// linCheck reads the final state and requires the history to be
// linearizable; a failure leaves porcupine's visualization in the test's
// artifact directory.
func linCheck(t *testing.T, em *emulator.Emulator, r *linearizability.Recorder, f linearizability.File) {
	t.Helper()
	r.Observe(f, func() ([]byte, bool) {
		h := em.History(owner, repo, branch, statePath)
		if len(h) == 0 || h[len(h)-1].Content == nil {
			return nil, false
		}
		return h[len(h)-1].Content, true
	})
	res := r.Check(linearizability.Options{VisualizeDir: t.ArtifactDir, Name: t.Name()})
	assert.True(t, res.OK(), "%s\n%v\nvisualization: %s", res.Summary(), res.Violations, res.Visualization)
	assert.Positive(t, res.Claims, "the admissions and releases were recorded")
	t.Log(res.Summary())
}
