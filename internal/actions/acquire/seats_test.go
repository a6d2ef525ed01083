package acquire_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actiontest"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// seatsConfig is a schema-6 lock naming two seats, one per kind of
// license, with priority classes up to 9 (0 for pull requests).
const seatsConfig = `{"maxHolders":2,"runnerSerialization":true,"resourceLifecycle":true,"accountHealth":true,"fencedAdmission":true,
"releaseCooldownSeconds":0,"maxOvertakes":3,
"seats":[{"name":"pro-1","labels":["pro"]},{"name":"plus-1","labels":["plus"]}],
"priority":{"max":9,"maxForPullRequests":0}}`

// TestNamedSeatsLabelsAndPriorityEndToEnd is issue 25's acceptance through
// the real action on the emulator: on a schema-6 lock whose config names a
// pro and a plus seat, every admitted job's seat output names a seat
// carrying its labels; a priority-5 job queued after two priority-0 jobs
// is admitted first when the pro seat frees; a pull-request run asking for
// priority 5 is refused with priority-not-allowed, and a label no seat
// carries with no-matching-seat, both before any write.
func TestNamedSeatsLabelsAndPriorityEndToEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := actiontest.NewWorld(t, seatsConfig)
		pro := w.NewJob("pro-holder", "runner-a").Input("seat-labels", "pro")
		require.NoError(t, run(context.Background(), pro), pro.Out.String())
		assert.Equal(t, "pro-1", pro.Outputs()["seat"])
		assert.Equal(t, "pro", pro.Outputs()["seat-labels"])
		assert.Equal(t, "PRO_1", pro.Outputs()["seat-secret-suffix"])
		assert.Contains(t, pro.Summary(), "pro-1")
		plus := w.NewJob("plus-holder", "runner-b").Input("seat-labels", "plus")
		require.NoError(t, run(context.Background(), plus), plus.Out.String())
		assert.Equal(t, "plus-1", plus.Outputs()["seat"])
		assert.Equal(t, 6, w.State().SchemaVersion)

		// Two priority-0 pro jobs queue, then a priority-5 one.
		type waiter struct {
			job  *actiontest.Job
			done chan error
		}
		start := func(name, runner, priority string) waiter {
			j := w.NewJob(name, runner).Input("seat-labels", "pro").Input("priority", priority).Input("timeout-minutes", "30")
			wt := waiter{job: j, done: make(chan error, 1)}
			go func() { wt.done <- run(context.Background(), j) }()
			time.Sleep(30 * time.Second)
			synctest.Wait()
			return wt
		}
		low1 := start("low-1", "runner-c", "0")
		low2 := start("low-2", "runner-d", "0")
		high := start("high", "runner-e", "5")
		s := w.State()
		require.Len(t, s.Queue, 3, "all three wait for the pro seat")
		for _, e := range s.Queue {
			assert.Equal(t, "pro", e.Labels, e.HolderID)
		}

		pro.ResetFiles()
		pro.Input("resource-cleanup-status", "confirmed")
		require.NoError(t, releaseRun(context.Background(), pro))
		require.NoError(t, <-high.done, high.job.Out.String())
		assert.Equal(t, "true", high.job.Outputs()["acquired"])
		assert.Equal(t, "pro-1", high.job.Outputs()["seat"], "the freed pro seat went to the priority-5 job")
		s = w.State()
		assert.Equal(t, 2, len(s.Queue), "both priority-0 jobs still wait")
		for _, j := range []*actiontest.Job{low1.job, low2.job} {
			assert.Positive(t, lockstate.QueuePosition(s, j.HolderID()), j.HolderID())
		}

		// A pull-request run may not use a priority class above 0; a label
		// no seat carries is refused; neither writes.
		versions := w.Versions()
		w.Em.SetPullRequest(actiontest.Owner, actiontest.Consumer, 5, "open", headA)
		pr := prJob(w, "pr", "runner-f").Input("priority", "5")
		err := run(context.Background(), pr)
		require.Error(t, err)
		assert.Equal(t, "false", pr.Outputs()["acquired"])
		assert.Equal(t, "priority-not-allowed", pr.Outputs()["admission-result"])
		gold := w.NewJob("gold", "runner-g").Input("seat-labels", "gold")
		err = run(context.Background(), gold)
		require.Error(t, err)
		assert.Equal(t, "no-matching-seat", gold.Outputs()["admission-result"])
		assert.Contains(t, err.Error(), "plus, pro", "the refusal names the labels that exist")
		assert.Equal(t, versions, w.Versions(), "refused before any write")

		// The other two are admitted in FIFO order as seats free.
		high.job.ResetFiles()
		high.job.Input("resource-cleanup-status", "confirmed")
		require.NoError(t, releaseRun(context.Background(), high.job))
		require.NoError(t, <-low1.done, low1.job.Out.String())
		assert.Equal(t, "pro-1", low1.job.Outputs()["seat"])
		low1.job.ResetFiles()
		low1.job.Input("resource-cleanup-status", "confirmed")
		require.NoError(t, releaseRun(context.Background(), low1.job))
		require.NoError(t, <-low2.done, low2.job.Out.String())
		assert.Equal(t, "pro-1", low2.job.Outputs()["seat"])
	})
}

// TestSeatInputsAreValidatedBeforeAnyRequest: an invalid label expression
// and a priority outside 0-9 are both listed in one refusal, before any
// request.
func TestSeatInputsAreValidatedBeforeAnyRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := actiontest.NewWorld(t, seatsConfig)
		j := w.NewJob("bad", "runner-a").Input("seat-labels", "Pro!").Input("priority", "10")
		err := run(context.Background(), j)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "seat-labels")
		assert.Contains(t, err.Error(), "priority")
		assert.Zero(t, w.Versions())
	})
}

// TestSeatsLockIsNotAdmittedOnTheSafeDefaults is the simulation's seat-seed
// finding (docs/simulation.md): when acquire's first read of the lock
// config fails, the safe defaults name no seats, and a job admitted on them
// held no seat and output none. A schema-6 lock is not admitted (nor a new
// lock created) on the defaults: the job waits without writing, reads the
// config at every poll, and is admitted to a named seat once a read
// succeeds.
func TestSeatsLockIsNotAdmittedOnTheSafeDefaults(t *testing.T) {
	for _, name := range []string{"schema-6 lock", "new lock", "refresh fails"} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := actiontest.NewWorld(t, seatsConfig)
				if name == "schema-6 lock" {
					first := w.NewJob("first", "runner-a").Input("seat-labels", "plus")
					require.NoError(t, run(context.Background(), first), first.Out.String())
					require.Equal(t, 6, w.State().SchemaVersion)
				}
				fault := emulator.Fault{Method: "GET", PathPattern: "/repos/acme/build-lock/contents/locks/seats.config.json", Kind: emulator.ServerError, Status: 503}
				j := w.NewJob("build", "runner-b")
				done := make(chan error, 1)
				var holder *actiontest.Job
				if name == "refresh fails" {
					// The pro seat is held: the job reads the config, then
					// queues; the refresh after the holder leaves fails.
					holder = w.NewJob("holder", "runner-c").Input("seat-labels", "pro")
					require.NoError(t, run(context.Background(), holder), holder.Out.String())
					j.Input("seat-labels", "pro").Env["BUILD_LOCK_CONFIG_TTL_MS"] = "1000"
					go func() { done <- run(context.Background(), j) }()
					time.Sleep(time.Minute)
					synctest.Wait()
					require.Equal(t, 1, lockstate.QueuePosition(w.State(), j.HolderID()))
				}
				id := w.Em.AddFault(fault)
				if holder != nil {
					time.Sleep(10 * time.Second)
					releaseJob(t, holder)
				}
				versions := w.Versions()
				if holder == nil {
					go func() { done <- run(context.Background(), j) }()
				}
				time.Sleep(3 * time.Minute)
				synctest.Wait()
				assert.Equal(t, versions, w.Versions(), "nothing written on the safe defaults")
				if holder == nil {
					assert.Contains(t, j.Out.String(), "Waiting for the lock config")
				} else {
					assert.Contains(t, j.Out.String(), "names seats, so nothing is admitted until it can be read again")
				}

				w.Em.RemoveFault(id)
				require.NoError(t, <-done, j.Out.String())
				assert.Equal(t, "true", j.Outputs()["acquired"])
				assert.Equal(t, "pro-1", j.Outputs()["seat"], "admitted to a named seat")
				assert.Equal(t, 6, w.State().SchemaVersion)
			})
		})
	}
}

// TestAnAdmissionRoundOnAnUpgradedStateReadsTheConfigAgain is sim seat seed
// 297's second path (docs/simulation.md "Found by the seat seeds"): a job
// whose config snapshot predates the operator's naming of the seats read a
// schema-5 state with a seat free and wrote its admission; a writer with
// the new config upgraded the state to schema 6 first, and the round after
// the lost race, decided at the branch head, admitted the job without a
// seat on the schema-6 state. The staleness check ran on the read, not on
// each round's state. The round now ends, the config is read again, and
// the job is admitted to a named seat.
func TestAnAdmissionRoundOnAnUpgradedStateReadsTheConfigAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := actiontest.NewWorld(t, `{"maxHolders":2,"runnerSerialization":true,"resourceLifecycle":true,"accountHealth":true,"releaseCooldownSeconds":0}`)
		a1, a2 := w.NewJob("holder-1", "runner-a"), w.NewJob("holder-2", "runner-b")
		require.NoError(t, run(context.Background(), a1))
		require.NoError(t, run(context.Background(), a2))
		require.Equal(t, 5, w.State().SchemaVersion)

		b := w.NewJob("waiter", "runner-c")
		var (
			mu    sync.Mutex
			armed bool
			fired int
		)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := startQueuedWithPutHook(ctx, t, w, b, func() {
			mu.Lock()
			fire := armed
			armed = false
			if fire {
				fired++
			}
			mu.Unlock()
			if fire {
				// The operator names the seats, and a job with the new
				// config is admitted first: its write upgrades the state
				// to schema 6.
				w.SetConfig(seatsConfig)
				c := w.NewJob("upgrader", "runner-d").Input("seat-labels", "plus")
				assert.NoError(t, run(context.Background(), c), c.Out.String())
				assert.Equal(t, 6, w.State().SchemaVersion)
			}
		})

		time.Sleep(time.Minute) // the snapshot is older than staleConfigAge, within the config TTL
		mu.Lock()
		armed = true
		mu.Unlock()
		releaseJob(t, a1)
		releaseJob(t, a2)

		require.NoError(t, <-done, b.Out.String())
		mu.Lock()
		defer mu.Unlock()
		require.Equal(t, 1, fired, "b's admission write raced the upgrade")
		assert.Equal(t, "true", b.Outputs()["acquired"])
		assert.Equal(t, "pro-1", b.Outputs()["seat"], "admitted to a named seat, not anonymously")
		for _, h := range w.State().Holders {
			assert.NotEmpty(t, h.Seat, "%s holds a named seat", h.HolderID)
		}
	})
}
