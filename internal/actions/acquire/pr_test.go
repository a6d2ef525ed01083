package acquire_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actiontest"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

var (
	headA = strings.Repeat("a", 40)
	headB = strings.Repeat("b", 40)
)

// prJob is a pull request run for PR 5 at headA.
func prJob(w *actiontest.World, name, runner string) *actiontest.Job {
	j := w.NewJob(name, runner)
	j.Env["GITHUB_EVENT_NAME"] = "pull_request"
	return j.Input("github-token", actiontest.ConsumerToken).Input("pull-request-number", "5").Input("expected-head-sha", headA)
}

func TestPullRequestSupersededWhileQueued(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := actiontest.NewWorld(t, `{"maxHolders":1}`)
		w.Em.SetPullRequest(actiontest.Owner, actiontest.Consumer, 5, "open", headA)
		j := prJob(w, "build", "runner-1")
		_, done := holderAndWaiter(t, w, context.Background(), j)
		w.Em.SetPullRequest(actiontest.Owner, actiontest.Consumer, 5, "open", headB)
		err := <-done
		require.ErrorContains(t, err, "superseded")
		assert.Equal(t, "superseded", j.Outputs()["admission-result"])
		assert.Zero(t, lockstate.QueuePosition(w.State(), j.HolderID()), "the queue entry is removed")
	})
}

func TestPullRequestChecksAroundAdmission(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := actiontest.NewWorld(t, `{"maxHolders":1}`)
		w.Em.SetPullRequest(actiontest.Owner, actiontest.Consumer, 5, "open", headA)
		j := prJob(w, "build", "runner-1")
		require.NoError(t, run(context.Background(), j))
		pulls := w.Em.Metrics().Routes["GET /repos/{owner}/{repo}/pulls/{pull_number}"].Requests
		assert.Equal(t, int64(3), pulls, "before setup, before the admission write, after admission")
		s := w.State()
		require.Len(t, s.Holders, 1)
		assert.Equal(t, strconv.FormatInt(j.JobID, 10), s.Holders[0].JobID, "the exact job id is resolved with github-token")
	})
}

func TestPullRequestCheckFailures(t *testing.T) {
	t.Run("lookup fails before setup", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := actiontest.NewWorld(t, `{"maxHolders":1}`)
			j := prJob(w, "build", "runner-1") // PR 5 does not exist
			require.Error(t, run(context.Background(), j))
			assert.Equal(t, "pr-head-check-failed", j.Outputs()["admission-result"])
			assert.Zero(t, w.Puts())
		})
	})
	t.Run("invalid inputs send nothing", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := actiontest.NewWorld(t, `{"maxHolders":1}`)
			j := prJob(w, "build", "runner-1").Input("expected-head-sha", "abc")
			require.ErrorContains(t, run(context.Background(), j), "expected-head-sha")
			assert.Equal(t, "pr-head-check-failed", j.Outputs()["admission-result"])
			assert.Zero(t, w.Em.Metrics().Requests)
		})
	})
	t.Run("stale and cleanup fails", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := actiontest.NewWorld(t, `{"maxHolders":1}`)
			w.Em.SetPullRequest(actiontest.Owner, actiontest.Consumer, 5, "open", headA)
			j := prJob(w, "build", "runner-1")
			_, done := holderAndWaiter(t, w, context.Background(), j)
			w.Em.AddFault(emulator.Fault{Method: "PUT", Kind: emulator.ServerError, Status: 500})
			w.Em.SetPullRequest(actiontest.Owner, actiontest.Consumer, 5, "open", headB)
			require.Error(t, <-done)
			assert.Equal(t, "pr-head-cleanup-failed", j.Outputs()["admission-result"])
		})
	})
}

func TestJobIDIsOmittedWhenAmbiguous(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := actiontest.NewWorld(t, `{"maxHolders":1}`)
		j := w.NewJob("build", "runner-1").Input("github-token", actiontest.ConsumerToken)
		runID, _ := strconv.ParseInt(j.Env["GITHUB_RUN_ID"], 10, 64)
		w.Em.AddJob(actiontest.Owner, actiontest.Consumer, runID, 1, emulator.Job{Name: "twin", RunnerName: "runner-1", Status: "in_progress"})
		require.NoError(t, run(context.Background(), j))
		assert.Empty(t, w.State().Holders[0].JobID)
		assert.Contains(t, j.Out.String(), "Found 2 active jobs")
	})
}

func TestPostCleanupQuarantinesHeldCapacity(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := actiontest.NewWorld(t, `{"maxHolders":1,"runnerSerialization":true,"resourceLifecycle":true,"releaseCooldownSeconds":60}`)
		s4 := lockstate.Empty(actiontest.Lock)
		s4.SchemaVersion = 4
		w.SeedState(s4)
		j := w.NewJob("build", "runner-1")
		j.Env["BUILD_LOCK_MODE"] = "acquire-with-cleanup"
		require.NoError(t, run(context.Background(), j))
		assert.Equal(t, "enabled", j.Saved()["build_lock_cleanup"])

		post := w.NewJob("build", "runner-1")
		post.Env = j.Env
		post.Env["BUILD_LOCK_MODE"] = "post-cleanup"
		post.Env["STATE_build_lock_cleanup"] = "enabled"
		require.NoError(t, run(context.Background(), post))
		s := w.State()
		assert.Empty(t, s.Holders)
		require.Len(t, s.Reservations, 1)
		assert.Equal(t, lockstate.ReservationQuarantine, s.Reservations[0].State, "post cannot prove resource cleanup")
	})
}

func TestPostCleanupNeverFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := actiontest.NewWorld(t, `{"maxHolders":1}`)
		j := w.NewJob("build", "runner-1")
		j.Env["BUILD_LOCK_MODE"] = "post-cleanup"
		require.NoError(t, run(context.Background(), j), "not registered: nothing to do")
		assert.Zero(t, w.Em.Metrics().Requests)
		j.Env["STATE_build_lock_cleanup"] = "enabled"
		w.Em.AddFault(emulator.Fault{Kind: emulator.ServerError, Status: 503})
		begin := time.Now()
		require.NoError(t, run(context.Background(), j), "a failing cleanup only warns")
		assert.Contains(t, j.Out.String(), "::warning::Build-lock post cleanup failed")
		assert.Less(t, time.Since(begin), time.Minute+time.Second)
	})
}
