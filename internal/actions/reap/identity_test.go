package reap_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/reap"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/reap/reaptest"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/recovery"
)

// TestReapChecksTheLockRepositoryByID: the reaper runs only in the lock
// repository, checked by name from the inputs and then by id from GitHub;
// a run whose GITHUB_REPOSITORY_ID is another repository's (the lock
// repository renamed and its name re-used) writes nothing. So do the
// operator recoveries through the same action.
func TestReapChecksTheLockRepositoryByID(t *testing.T) {
	t.Parallel()
	for _, op := range []string{"reap", "recover"} {
		t.Run(op, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := reaptest.New(t, cfgLifecycle)
				w.SeedState(state(4))
				w.Env["GITHUB_REPOSITORY_ID"] = "999"
				w.Env["INPUT_OPERATION"] = op
				w.Env["INPUT_RESERVATION_ID"] = "q-1"
				w.Env["INPUT_RESOURCE_SAFE"] = "true"
				err := reap.Run(context.Background(), deps(w, nil))
				require.Error(t, err)
				assert.Equal(t, recovery.RuleLockRepositoryOnly, lockaction.ReasonCode(err))
				assert.Contains(t, err.Error(), "GITHUB_REPOSITORY_ID is 999")
				assert.Len(t, w.Messages(), 1, "nothing written after the seed")
			})
		})
	}
}

// TestSchema2HolderGetsExactJobEvidenceFromItsRecordedRunner: a schema-2
// holder has no runnerId (schema 2 does not write it), so the reference's
// exact-job check (job id and runner_name == runnerId) could never match
// and a crashed matrix leg whose sibling keeps the run in progress stayed
// until its lease. The recorded runnerName (RUNNER_NAME) names the job's
// runner: its completed job proves it stale.
func TestSchema2HolderGetsExactJobEvidenceFromItsRecordedRunner(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := reaptest.New(t, `{"maxHolders":2}`)
		now := time.Now()
		runID := run(w, game, "in_progress", "") // a sibling leg keeps the run going
		jobID := job(w, game, runID, "unity-win-01", "completed", "failure")
		h := holder(game, runID, "", jobID, now, now.Add(4*time.Hour))
		h.RunnerName = "unity-win-01"
		s := state(2)
		s.Holders = []lockstate.Holder{h}
		w.SeedState(s)
		require.NoError(t, reap.Run(context.Background(), deps(w, nil)))
		assert.Empty(t, w.State().Holders, "the completed job proves the holder stale before its lease")
		assert.Contains(t, w.Summary(), "job "+fmt.Sprint(jobID)+" completed")
	})
}
