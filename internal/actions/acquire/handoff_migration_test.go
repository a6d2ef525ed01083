package acquire_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/acquire"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actiontest"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockinit"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// TestHandedSeatSurvivesAConfigThatAsksForAnUpgrade is the regression of
// simulation seed 107466. A release on the schema-2 config hands its seat
// to a waiter (direct handoff); the operator has just turned on runner
// serialization, and the waiter's next read is stale (it still shows it
// queued). The waiter once failed with drain-required and no outputs while
// the seat was recorded as its own. Now a pending upgrade only pauses
// admission: the waiter keeps polling and finds the seat it holds.
func TestHandedSeatSurvivesAConfigThatAsksForAnUpgrade(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := actiontest.NewWorld(t, `{"maxHolders":1}`)
		a := w.NewJob("holder", "runner-a")
		require.NoError(t, run(context.Background(), a))
		a.ResetFiles()
		b := w.NewJob("waiter", "runner-b").Input("timeout-minutes", "5")
		b.Env[acquire.EnvConfigTTLMS] = "1" // re-read the config on every poll
		done := make(chan error, 1)
		go func() { done <- run(context.Background(), b) }()
		time.Sleep(time.Second)
		synctest.Wait()
		require.Equal(t, 1, lockstate.QueuePosition(w.State(), b.HolderID()))

		require.NoError(t, releaseRun(context.Background(), a))
		s := w.State()
		require.Len(t, s.Holders, 1)
		require.Equal(t, b.HolderID(), s.Holders[0].HolderID, "the release handed b the seat")

		w.SetConfig(`{"maxHolders":1,"runnerSerialization":true}`)
		w.Em.AddFault(emulator.Fault{Method: "GET", PathPattern: "/repos/acme/build-lock/contents/" + actiontest.StatePath, Kind: emulator.StaleRead, StaleVersions: 1, Count: 1})

		require.NoError(t, <-done)
		out := b.Outputs()
		assert.Equal(t, "true", out["acquired"])
		assert.Equal(t, "acquired", out["admission-result"])
		assert.Equal(t, b.HolderID(), w.State().Holders[0].HolderID)
		assert.Equal(t, 2, w.State().SchemaVersion, "the upgrade waits for b, admitted under the old rules, to release")
	})
}

// upgradeConfig is the config of a 2-seat lock that asks for schema target,
// with a 30-second release cooldown.
func upgradeConfig(target int) string {
	flags := []string{`"maxHolders":2`, `"releaseCooldownSeconds":30`}
	for v, f := range map[int]string{3: "runnerSerialization", 4: "resourceLifecycle", 5: "accountHealth", 6: "fencedAdmission"} {
		if v <= target {
			flags = append(flags, fmt.Sprintf("%q:true", f))
		}
	}
	return "{" + strings.Join(flags, ",") + "}"
}

// TestUpgradeDrainsWhileJobsWait is the acceptance for each step: a
// lock with one holder admitted under the old schema; the operator turns
// the next feature on; an acquire that starts afterwards on another runner
// (with a seat free) waits instead of failing, says that the lock drains
// for an upgrade, and is admitted after the holder releases, on the new
// schema.
func TestUpgradeDrainsWhileJobsWait(t *testing.T) {
	for from := 2; from <= 5; from++ {
		t.Run(fmt.Sprintf("schema %d to %d", from, from+1), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := actiontest.NewWorld(t, upgradeConfig(from))
				a := w.NewJob("holder", "runner-a")
				require.NoError(t, run(context.Background(), a))
				require.Equal(t, from, w.State().SchemaVersion)

				w.SetConfig(upgradeConfig(from + 1))
				b := w.NewJob("waiter", "runner-b").Input("timeout-minutes", "30")
				done := make(chan error, 1)
				go func() { done <- run(context.Background(), b) }()
				time.Sleep(2 * time.Minute)
				synctest.Wait()
				s := w.State()
				require.Equal(t, 1, lockstate.QueuePosition(s, b.HolderID()), "b waits although a seat is free")
				require.Equal(t, from, s.SchemaVersion)
				assert.Contains(t, b.Out.String(), fmt.Sprintf("is draining for its upgrade from schema %d to schema %d", from, from+1))
				assert.Contains(t, b.Out.String(), "holders left: 1")

				a.ResetFiles()
				a.Input("resource-cleanup-status", "confirmed")
				require.NoError(t, releaseRun(context.Background(), a))
				require.NoError(t, <-done, b.Out.String())
				out := b.Outputs()
				assert.Equal(t, "true", out["acquired"])
				s = w.State()
				assert.Equal(t, from+1, s.SchemaVersion)
				assert.Equal(t, b.HolderID(), s.Holders[0].HolderID)
				assert.Contains(t, b.Summary(), "Waited for an upgrade")
				if from+1 >= 6 {
					assert.Equal(t, "1", out["fencing-token"])
				}
			})
		})
	}
}

// TestFreshLockAdmitsTheREADMEInputs: a lock with no state file whose
// config is what buildlock init writes (locks/example.config.json: every
// protection, schema 6) admits the README's consumer inputs (a runner id
// and require-resource-lifecycle) on its first acquire, at schema 6 with
// fencing token 1, and the release succeeds; so does the older example
// (serialization, lifecycle and account health at once: schema 5).
func TestFreshLockAdmitsTheREADMEInputs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := actiontest.NewWorld(t, string(lockinit.ConfigJSON(2)))
		require.Zero(t, w.Versions(), "no state file yet")
		j := w.NewJob("unity", "win-01").Input("require-resource-lifecycle", "true")
		require.NoError(t, run(context.Background(), j), j.Out.String())
		assert.Equal(t, "true", j.Outputs()["acquired"])
		assert.Equal(t, "1", j.Outputs()["fencing-token"])
		assert.Equal(t, 6, w.State().SchemaVersion)
		require.NoError(t, releaseRun(context.Background(), j))
		assert.Empty(t, w.State().Holders)
	})
	synctest.Test(t, func(t *testing.T) {
		w := actiontest.NewWorld(t, `{"maxHolders":2,"runnerSerialization":true,"resourceLifecycle":true,"accountHealth":true,"releaseCooldownSeconds":360}`)
		require.Zero(t, w.Versions(), "no state file yet")
		j := w.NewJob("unity", "win-01").Input("require-resource-lifecycle", "true")
		require.NoError(t, run(context.Background(), j), j.Out.String())
		assert.Equal(t, "true", j.Outputs()["acquired"])
		s := w.State()
		assert.Equal(t, 5, s.SchemaVersion)
		assert.Equal(t, "win-01", s.Holders[0].RunnerID)
		require.NoError(t, releaseRun(context.Background(), j))
		assert.Empty(t, w.State().Holders)
	})
}

// TestWaitingSaysWhatFreesAQuarantinedSeat: every seat held by a
// quarantine; the waiting job's log (every few minutes) and its summary
// give the exact recover command with the reservation id.
func TestWaitingSaysWhatFreesAQuarantinedSeat(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := actiontest.NewWorld(t, `{"maxHolders":1,"runnerSerialization":true,"resourceLifecycle":true,"releaseCooldownSeconds":30}`)
		a := w.NewJob("holder", "runner-a")
		require.NoError(t, run(context.Background(), a))
		require.NoError(t, releaseRun(context.Background(), a)) // no cleanup report: quarantine
		s := w.State()
		require.Len(t, s.Reservations, 1)
		id := s.Reservations[0].ReservationID
		b := w.NewJob("waiter", "runner-b").Input("timeout-minutes", "10")
		err := run(context.Background(), b)
		require.Error(t, err)
		assert.Equal(t, "false", b.Outputs()["acquired"])
		log := b.Out.String()
		want := "gh workflow run recover-build-lock.yml --repo acme/build-lock -f operation=recover -f reservation-id=" + id + " -f resource-safe=true"
		assert.Contains(t, log, want)
		assert.GreaterOrEqual(t, strings.Count(log, want), 3, "repeated every few minutes over 10 minutes")
		assert.Contains(t, b.Summary(), "Blocked by")
		assert.Contains(t, b.Summary(), id)
	})
}

// TestWaiterWithAnOldConfigJoinsARunnerSerializationDrain: the operator turns
// on runner serialization while jobs wait on schema 2. The upgrade drains
// until every queued job has recorded its runner id, which each does on a
// poll with a config snapshot that asks for the upgrade. A waiter whose
// snapshot is older (the default re-read is every 5 minutes; a lagging
// replica may even have shown it no config at all) used to hold the whole
// drain, and every job behind it, until its snapshot expired (the e2e
// TestProcessJobsShareTwoSeatsFairly waited 4 minutes for one). Another
// waiter's recorded runner id proves a newer config: the old snapshot is
// read again within staleConfigAge.
func TestWaiterWithAnOldConfigJoinsARunnerSerializationDrain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := actiontest.NewWorld(t, `{"maxHolders":1}`)
		a := w.NewJob("holder", "runner-a")
		require.NoError(t, run(context.Background(), a))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		b := w.NewJob("waiter", "runner-b")
		bDone := start(ctx, b)
		time.Sleep(time.Second)
		synctest.Wait()
		require.Equal(t, 1, lockstate.QueuePosition(w.State(), b.HolderID()))

		w.SetConfig(`{"maxHolders":1,"runnerSerialization":true}`)
		c := w.NewJob("late", "runner-c")
		cDone := start(ctx, c)
		time.Sleep(time.Second)
		synctest.Wait()
		entry := func(id string) lockstate.Entry {
			s := w.State()
			return s.Queue[lockstate.QueuePosition(s, id)-1]
		}
		require.Equal(t, "runner-c", entry(c.HolderID()).PendingRunnerID, "the job with the new config records its runner id")
		require.Empty(t, entry(b.HolderID()).PendingRunnerID)

		time.Sleep(time.Minute)
		synctest.Wait()
		assert.Equal(t, "runner-b", entry(b.HolderID()).PendingRunnerID, "the waiter with the old config joined the drain within a minute")

		require.NoError(t, releaseRun(context.Background(), a))
		time.Sleep(time.Minute)
		synctest.Wait()
		s := w.State()
		assert.Equal(t, 3, s.SchemaVersion, "the drain ended and the upgrade landed")
		require.Len(t, s.Holders, 1)
		assert.Equal(t, b.HolderID(), s.Holders[0].HolderID, "in queue order")
		cancel()
		<-bDone
		<-cDone
	})
}
