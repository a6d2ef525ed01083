package acquire_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actiontest"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
)

const statePathPattern = "/repos/acme/build-lock/contents/locks/seats.json"

// TestLostAdmissionResponseThenUnreadableReadIsDecidedByTheNextRead is the
// hostile tester's case: the admission PUT lands but its response is lost,
// the client's retry of the same CAS write gets 409, and the re-read that
// should decide fails. Before, acquire exited 1 with no outputs while its
// holder stayed in the state until the reaper.
func TestLostAdmissionResponseThenUnreadableReadIsDecidedByTheNextRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := actiontest.NewWorld(t, `{"maxHolders":1}`)
		w.SeedState(emptyState())
		w.Em.AddFault(emulator.Fault{Method: "PUT", Kind: emulator.WriteAcceptedResponseLost, Count: 1})
		// The initial read passes; the store's re-read after the ambiguous
		// write exhausts its attempts on 502s; later reads work.
		w.Em.AddFault(emulator.Fault{Method: "GET", PathPattern: statePathPattern, Kind: emulator.ServerError, Status: 502, Skip: 1, Count: 5})
		j := w.NewJob("build", "runner-1")
		require.NoError(t, run(context.Background(), j))
		out := j.Outputs()
		assert.Equal(t, "true", out["acquired"], "the job's own admission is in the state: it is acquired")
		assert.Equal(t, "acquired", out["admission-result"])
		s := w.State()
		require.Len(t, s.Holders, 1)
		assert.Equal(t, j.HolderID(), s.Holders[0].HolderID)
		assert.Len(t, w.Em.History(actiontest.Owner, actiontest.LockRepo, "lock-state", actiontest.StatePath), 2, "seed + one admission, never a second write")
	})
}

// TestLostAdmissionResponseWithAnUnreadableStateReportsUnknown: when no read
// succeeds inside the deadline, acquire cannot know whether it holds the
// seat. It reports acquired=false with admission-result=admission-unknown
// and the holder id, so no licensed step runs and the always() release
// removes the holder if the write landed.
func TestLostAdmissionResponseWithAnUnreadableStateReportsUnknown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := actiontest.NewWorld(t, `{"maxHolders":1}`)
		w.SeedState(emptyState())
		w.Em.AddFault(emulator.Fault{Method: "PUT", Kind: emulator.WriteAcceptedResponseLost, Count: 1})
		w.Em.AddFault(emulator.Fault{Method: "GET", PathPattern: statePathPattern, Kind: emulator.ServerError, Status: 502, Skip: 1})
		j := w.NewJob("build", "runner-1").Input("timeout-minutes", "10")
		err := run(context.Background(), j)
		require.Error(t, err)
		out := j.Outputs()
		assert.Equal(t, "false", out["acquired"])
		assert.Equal(t, "admission-unknown", out["admission-result"])
		assert.Equal(t, j.HolderID(), out["holder-id"])
		require.Len(t, w.State().Holders, 1, "the write landed")

		w.Em.ClearFaults()
		j.ResetFiles()
		require.NoError(t, releaseRun(context.Background(), j))
		assert.Equal(t, "true", j.Outputs()["released"], "the consumer's always() release cleans it up")
		assert.Empty(t, w.State().Holders)
	})
}

// TestReleaseAfterAStaleReadStillReleases is the hostile tester's stale
// read: right after the admission, one lagging replica serves the state as
// it was before it. Release used to print "Nothing to release", exit 0 with
// released=false and leave the holder for the reaper.
func TestReleaseAfterAStaleReadStillReleases(t *testing.T) {
	for _, step := range []string{"release", "post"} {
		t.Run(step, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := actiontest.NewWorld(t, `{"maxHolders":1}`)
				w.SeedState(emptyState())
				j := w.NewJob("build", "runner-1")
				require.NoError(t, run(context.Background(), j))
				require.Len(t, w.State().Holders, 1)
				w.Em.AddFault(emulator.Fault{Method: "GET", PathPattern: statePathPattern, Kind: emulator.StaleRead, Count: 1})
				j.ResetFiles()
				if step == "release" {
					require.NoError(t, releaseRun(context.Background(), j))
					assert.Equal(t, "true", j.Outputs()["released"])
				} else {
					d := j.Deps()
					env := map[string]string{"BUILD_LOCK_MODE": "post-cleanup", "STATE_build_lock_cleanup": "enabled"}
					base := d.Getenv
					d.Getenv = func(k string) string {
						if v, ok := env[k]; ok {
							return v
						}
						return base(k)
					}
					require.NoError(t, runDeps(context.Background(), d))
				}
				assert.Empty(t, w.State().Holders, "the seat is free again")
				assert.Contains(t, j.Out.String(), "stale")
			})
		})
	}
	t.Run("a job that never held a seat reads nothing more", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := actiontest.NewWorld(t, `{"maxHolders":1}`)
			w.SeedState(emptyState())
			j := w.NewJob("build", "runner-1")
			require.NoError(t, releaseRun(context.Background(), j))
			assert.Equal(t, "noop", j.Outputs()["cleanup-result"])
			assert.Equal(t, int64(1), w.Em.Metrics().Paths["GET /repos/acme/build-lock/git/ref/heads/lock-state"].Requests,
				"only the branch check: without this job's admission marker there is no head read")
		})
	})
}
