package acquire_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actiontest"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

const schema5Config = `{"maxHolders":1,"runnerSerialization":true,"resourceLifecycle":true,"accountHealth":true,"releaseCooldownSeconds":0}`

// schema5 is an empty schema-5 state.
func schema5() *lockstate.State {
	s := lockstate.Empty(actiontest.Lock)
	s.SchemaVersion = 5
	return s
}

// withIncident returns s with an active incident raised by another run.
func withIncident(t *testing.T, s *lockstate.State) *lockstate.State {
	t.Helper()
	inc, err := lockstate.IncidentFor(lockstate.Identity{
		HolderID: "acme/other:9:build:default", Repository: "acme/other", Workflow: "Unity", Job: "build",
		RunID: "9", RunAttempt: "1", RunURL: "https://github.com/acme/other/actions/runs/9", RunnerID: "runner-z",
	}, time.Now(), actiontest.ServerURL)
	require.NoError(t, err)
	c := s.Clone()
	c.ActiveIncident = inc
	return c
}

func TestIncidentVisibleAtFirstReadNeverEnqueues(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := actiontest.NewWorld(t, schema5Config)
		w.SeedState(withIncident(t, schema5()))
		j := w.NewJob("build", "runner-1")
		err := run(context.Background(), j)
		require.Error(t, err)
		for _, want := range []string{"operation=recover-incident", "portal-cleanup-confirmed=true", "acme/other", "Recover build lock (.github/workflows/recover-build-lock.yml)"} {
			assert.Contains(t, err.Error(), want)
		}
		inc := w.State().ActiveIncident
		assert.NotContains(t, err.Error(), inc.EvidenceDigest, "the digest is never printed")
		assert.Zero(t, w.Puts(), "zero writes")
		out := j.Outputs()
		assert.Equal(t, "false", out["acquired"])
		assert.Equal(t, "account-blocked", out["admission-result"])
		assert.Equal(t, inc.IncidentID, out["incident-id"])
		assert.Equal(t, "blocked", out["resource-health"])
		assert.Equal(t, lockstate.ReasonAccountLimit, out["resource-reason"])
	})
}

// queuedBehind seeds a schema-5 state held by another runner and queues j.
func queuedBehind(t *testing.T, w *actiontest.World, ctx context.Context, j *actiontest.Job) <-chan error {
	t.Helper()
	a := w.NewJob("holder", "runner-a")
	require.NoError(t, run(context.Background(), a))
	done := start(ctx, j)
	time.Sleep(time.Second)
	synctest.Wait()
	require.Equal(t, 1, lockstate.QueuePosition(w.State(), j.HolderID()))
	return done
}

func TestIncidentWhileQueued(t *testing.T) {
	t.Run("queue entry removed", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := actiontest.NewWorld(t, schema5Config)
			w.SeedState(schema5())
			j := w.NewJob("build", "runner-1")
			done := queuedBehind(t, w, context.Background(), j)
			w.SeedState(withIncident(t, w.State()))
			require.Error(t, <-done)
			assert.Equal(t, "account-blocked", j.Outputs()["admission-result"])
			s := w.State()
			assert.Zero(t, lockstate.QueuePosition(s, j.HolderID()))
			assert.Len(t, s.Holders, 1, "only this run's queue entry is removed")
		})
	})
	t.Run("cleanup failed", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := actiontest.NewWorld(t, schema5Config)
			w.SeedState(schema5())
			j := w.NewJob("build", "runner-1")
			done := queuedBehind(t, w, context.Background(), j)
			w.Em.AddFault(emulator.Fault{Method: "PUT", Kind: emulator.ServerError, Status: 503})
			w.SeedState(withIncident(t, w.State()))
			err := <-done
			require.Error(t, err)
			assert.Contains(t, err.Error(), "do not recover the incident or rerun")
			assert.Equal(t, "account-blocked-cleanup-failed", j.Outputs()["admission-result"])
		})
	})
}

func TestIncidentAfterAnAmbiguousAdmissionRetractsIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := actiontest.NewWorld(t, schema5Config)
		s := schema5()
		s.Reservations = []lockstate.Reservation{quarantine("q-1", "runner-1")}
		w.SeedState(s)
		w.Em.AddFault(emulator.Fault{Method: "PUT", Kind: emulator.WriteAcceptedResponseLost, Count: 1})
		j := w.NewJob("build", "runner-1")
		done := start(context.Background(), j)
		synctest.Wait() // the admission landed; its response was lost; the client backs off
		admitted := w.State()
		require.Len(t, admitted.Holders, 1, "the lost write was applied")
		require.Empty(t, admitted.Reservations, "the quarantine was consumed")
		w.SeedState(withIncident(t, admitted))
		require.Error(t, <-done)
		assert.Equal(t, "account-blocked", j.Outputs()["admission-result"])
		got := w.State()
		assert.Empty(t, got.Holders, "the admission is retracted before any licensed step")
		require.Len(t, got.Reservations, 1, "the consumed quarantine is restored")
		assert.Equal(t, "q-1", got.Reservations[0].ReservationID)
	})
}
