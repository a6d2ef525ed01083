package acquire_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actiontest"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

func TestIdleAdmissionCostsThreeResourceRequests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := actiontest.NewWorld(t, `{"maxHolders":1}`)
		require.NoError(t, w.Em.CreateBranch(actiontest.Owner, actiontest.LockRepo, "lock-state", "main"))
		j := w.NewJob("build", "runner-1")
		require.NoError(t, run(context.Background(), j))

		out := j.Outputs()
		assert.Equal(t, "true", out["acquired"])
		assert.Equal(t, "acquired", out["admission-result"])
		assert.Equal(t, actiontest.Lock, out["lock-name"])
		assert.Equal(t, j.HolderID(), out["holder-id"])
		assert.Equal(t, "false", out["stale-recovered"])
		assert.Equal(t, "false", out["quarantine-recovered"])
		assert.Equal(t, "healthy", out["resource-health"])
		assert.Equal(t, "", out["resource-reason"])
		assert.Equal(t, "1", out["attempts"])
		assert.Len(t, out, 19, "all outputs are written together")
		h := w.Em.History(actiontest.Owner, actiontest.LockRepo, "lock-state", actiontest.StatePath)
		require.Len(t, h, 1, "joining the queue and admission are one write")
		assert.Equal(t, h[0].BlobSHA, out["state-sha"])
		s := w.State()
		require.Len(t, s.Holders, 1)
		assert.Equal(t, j.HolderID(), s.Holders[0].HolderID)
		assert.Empty(t, s.Queue)

		m := w.Em.Metrics()
		assert.LessOrEqual(t, resourceRequests(m), int64(3), "config GET, state GET, PUT")
		assert.Contains(t, j.Summary(), "| Outcome | `acquired` |")
		assert.NotContains(t, j.Unmasked(), actiontest.KeyPEM()[40:80])
	})
}

func TestAlreadyHolderIsAcquiredWithoutAWrite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := actiontest.NewWorld(t, `{"maxHolders":1}`)
		j := w.NewJob("build", "runner-1")
		require.NoError(t, run(context.Background(), j))
		puts := w.Puts()
		j.ResetFiles()
		require.NoError(t, run(context.Background(), j), "a rerun of the same holder")
		assert.Equal(t, puts, w.Puts())
		assert.Equal(t, "acquired", j.Outputs()["admission-result"])
	})
}

func TestInputValidationHappensBeforeAnyRequest(t *testing.T) {
	cases := map[string]struct {
		input, value string
		want         string
	}{
		"lock name":         {"lock-name", "a/b", "lock-name-pattern"},
		"timeout":           {"timeout-minutes", "0", "timeout-minutes"},
		"lease":             {"lease-minutes", "1.5", "lease-minutes"},
		"poll":              {"poll-seconds", "-1", "poll-seconds"},
		"lifecycle boolean": {"require-resource-lifecycle", "yes", "require-resource-lifecycle"},
		"cooldown range":    {"minimum-release-cooldown-seconds", "86401", "minimum-release-cooldown-seconds"},
		"suffix edge space": {"holder-id-suffix", " x", "holder-id-suffix"},
		"suffix newline":    {"holder-id-suffix", "a\nb", "holder-id-suffix"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := actiontest.NewWorld(t, "")
				j := w.NewJob("build", "runner-1").Input(tc.input, tc.value)
				err := run(context.Background(), j)
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.want)
				assert.Zero(t, w.Em.Metrics().Requests, "no request before validation passes")
				assertNotAcquired(t, j, "")
			})
		})
	}
}

func TestConfigRequirementsAreCheckedBeforeAnyStateAccess(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := actiontest.NewWorld(t, `{"maxHolders":2,"releaseCooldownSeconds":5}`)
		j := w.NewJob("build", "runner-1").Input("require-resource-lifecycle", "true")
		err := run(context.Background(), j)
		require.ErrorContains(t, err, "resourceLifecycle=true")
		j2 := w.NewJob("build2", "runner-2").Input("minimum-release-cooldown-seconds", "6")
		require.ErrorContains(t, run(context.Background(), j2), "releaseCooldownSeconds >= 6")
		for _, r := range w.Em.Metrics().Log {
			assert.NotContains(t, r.Path, "lock-state")
			assert.NotContains(t, r.Path, actiontest.StatePath)
		}
		assertNotAcquired(t, j, "config-requirement")
	})
}

func TestInvalidStateFailsWithAcquiredFalse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := actiontest.NewWorld(t, "")
		require.NoError(t, w.Em.CreateBranch(actiontest.Owner, actiontest.LockRepo, "lock-state", "main"))
		_, err := w.Em.PutFile(actiontest.Owner, actiontest.LockRepo, "lock-state", actiontest.StatePath, []byte(`{"lock":"other","schemaVersion":2,"holders":[],"holder":null,"queue":[]}`))
		require.NoError(t, err)
		j := w.NewJob("build", "runner-1")
		require.Error(t, run(context.Background(), j))
		assertNotAcquired(t, j, "lock-mismatch")
		assert.Zero(t, w.Puts())
	})
}

func TestSameRunnerQuarantineIsReclaimed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := actiontest.NewWorld(t, `{"maxHolders":1,"runnerSerialization":true,"resourceLifecycle":true,"releaseCooldownSeconds":60}`)
		s := lockstate.Empty(actiontest.Lock)
		s.SchemaVersion = 4
		s.Reservations = []lockstate.Reservation{quarantine("q-1", "runner-1")}
		w.SeedState(s)
		j := w.NewJob("build", "runner-1")
		require.NoError(t, run(context.Background(), j))
		assert.Equal(t, "true", j.Outputs()["quarantine-recovered"])
		got := w.State()
		assert.Empty(t, got.Reservations)
		require.Len(t, got.Holders, 1)
	})
}

// quarantine is a schema-4 quarantine on runner.
func quarantine(id, runner string) lockstate.Reservation {
	return lockstate.Reservation{
		ReservationID: id, HolderID: "acme/other:1:build:default", Repository: "acme/other", Workflow: "Unity", Job: "build",
		RunID: "1", RunAttempt: "1", RunURL: "https://github.com/acme/other/actions/runs/1", RunnerID: runner,
		Reason: lockstate.ReasonDefaultUnproven, State: lockstate.ReservationQuarantine, CreatedAt: "2000-01-01T00:00:00.000Z",
	}
}
