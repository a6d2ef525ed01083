package acquire_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/acquire"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actiontest"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// TestHandedSeatSurvivesAConfigThatNeedsADrain is the regression of
// simulation seed 107466. A release on the schema-2 config hands its seat
// to a waiter (direct handoff); the operator has just turned on runner
// serialization, which needs the lock drained before it migrates, and the
// waiter's next read is stale (it still shows it queued). The waiter used to
// fail with drain-required and no outputs while the seat was recorded as
// its own, so no licensed step used the seat it held. It now decides once
// more on the state at the branch head, where it holds the seat.
func TestHandedSeatSurvivesAConfigThatNeedsADrain(t *testing.T) {
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
		assert.Contains(t, b.Out.String(), "drain the lock before enabling it")
		assert.Contains(t, b.Out.String(), "deciding on the state at the branch head")
		assert.Equal(t, b.HolderID(), w.State().Holders[0].HolderID)
	})
}

// TestWaiterRefusedByADrainLeavesNothing: a waiter whose config now needs
// the lock drained fails with drain-required, and first removes its own
// queue entry, so the refusal helps the drain instead of blocking it.
func TestWaiterRefusedByADrainLeavesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := actiontest.NewWorld(t, `{"maxHolders":1}`)
		a := w.NewJob("holder", "runner-a")
		require.NoError(t, run(context.Background(), a))
		b := w.NewJob("waiter", "runner-b").Input("timeout-minutes", "5")
		b.Env[acquire.EnvConfigTTLMS] = "1"
		done := make(chan error, 1)
		go func() { done <- run(context.Background(), b) }()
		time.Sleep(time.Second)
		synctest.Wait()
		require.Equal(t, 1, lockstate.QueuePosition(w.State(), b.HolderID()))

		w.SetConfig(`{"maxHolders":1,"runnerSerialization":true}`)
		err := <-done
		require.Error(t, err)
		assert.Equal(t, lockstate.CodeDrainRequired, lockstate.CodeOf(err))
		s := w.State()
		assert.Zero(t, lockstate.QueuePosition(s, b.HolderID()), "the refused waiter removed its entry")
		require.Len(t, s.Holders, 1)
		assert.Equal(t, a.HolderID(), s.Holders[0].HolderID, "the holder keeps its seat")
	})
}
