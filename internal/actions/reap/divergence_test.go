package reap_test

// Tests that pin deliberate divergences of the reaper's run shape from the
// JavaScript reference (reference-behavior.md §4.1; docs/divergences.md).

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/reap"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/reap/reaptest"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

const msgPrune = "Prune expired cooldowns for " + reaptest.Lock

// expiredCooldown is a schema-4 cooldown on runner that expired a minute ago.
func expiredCooldown(id, runner string, now time.Time) lockstate.Reservation {
	return lockstate.Reservation{ReservationID: id, HolderID: "acme/game:1:build:default", Repository: owner + "/" + game, Workflow: "CI", Job: "build",
		RunID: "1", RunAttempt: "1", RunURL: "https://github.com/acme/game/actions/runs/1", RunnerID: runner, Reason: "cleanup-confirmed",
		State: lockstate.ReservationCooldown, CreatedAt: lockstate.FormatTime(now.Add(-time.Hour)), AvailableAt: lockstate.FormatTime(now.Add(-time.Minute))}
}

// TestReapReadsTheStateAtTheBranchHead: the reference reads the state by
// branch name (E10 ?ref=lock-state), which a lagging replica can answer with
// an older version, so a run can conclude "No stale state found" while a
// crashed holder sits in the newest version. The reaper reads the branch
// head from the refs API and the file at that commit (store.LoadFresh): a
// read by commit SHA names one immutable version. Here every branch-name
// read of the state is served one version stale, and the holder is still
// proven stale and quarantined.
func TestReapReadsTheStateAtTheBranchHead(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := reaptest.New(t, cfgLifecycle)
		now := time.Now()
		w.SeedState(state(4)) // the version a lagging replica still serves
		s := state(4)
		s.Holders = []lockstate.Holder{holder(game, run(w, game, "completed", "failure"), "r1", 0, now, now.Add(time.Hour))}
		w.SeedState(s)
		w.Em.AddFault(emulator.Fault{Method: "GET", PathPattern: "/repos/acme/build-lock/contents/" + reaptest.StatePath(), Kind: emulator.StaleRead})

		require.NoError(t, reap.Run(context.Background(), deps(w, nil)))
		assert.Equal(t, []string{seedM, seedM, msgH}, w.Messages())
		final := w.State()
		assert.Empty(t, final.Holders)
		require.Len(t, final.Reservations, 1)
		assert.Equal(t, lockstate.ReservationQuarantine, final.Reservations[0].State)
		assert.Equal(t, int64(1), w.Em.Metrics().Paths["GET /repos/acme/build-lock/git/ref/heads/lock-state"].Requests, "one refs read for the head")
	})
}

// TestReapPruneOnlyCheckpointHasItsOwnCommit: the reference persists
// expired cooldowns with its capacity-critical checkpoint ("Reap
// capacity-critical stale state for <lock>", §4.1 step 3), even when no
// holder was reaped. The reaper prunes them in the routine queue write, and
// a write that only prunes is committed as "Prune expired cooldowns for
// <lock>", so the capacity-critical message always means a holder was
// reaped. A run with nothing expired writes nothing.
func TestReapPruneOnlyCheckpointHasItsOwnCommit(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := reaptest.New(t, cfgLifecycle)
		now := time.Now()
		runID := run(w, game, "in_progress", "")
		s := state(4)
		s.Holders = []lockstate.Holder{holder(game, runID, "r1", job(w, game, runID, "r1", "in_progress", ""), now, now.Add(time.Hour))}
		s.Reservations = []lockstate.Reservation{expiredCooldown("c-old", "r2", now)}
		w.SeedState(s)

		require.NoError(t, reap.Run(context.Background(), deps(w, nil)))
		assert.Equal(t, []string{seedM, msgPrune}, w.Messages())
		final := w.State()
		assert.Empty(t, final.Reservations, "the expired cooldown is pruned")
		assert.Equal(t, s.Holders, final.Holders, "the live holder is kept")
		assert.Contains(t, w.Summary(), "Pruned 1 expired cooldown(s)")

		// Nothing left to prune: the next run writes nothing.
		require.NoError(t, reap.Run(context.Background(), deps(w, nil)))
		assert.Equal(t, []string{seedM, msgPrune}, w.Messages())
	})
}

// TestReapQuarantineGraceIsFixed: the reference's quarantine auto-recovery
// grace is config().leaseMinutes (§4.1 step 5: 240 unless a lease-minutes
// input is set, although reap-stale-locks declares no such input). Here the
// grace is the fixed DefaultLeaseGrace of 240 minutes: a stray lease-minutes
// value in the reaper's environment cannot shorten how long an unproven seat
// stays quarantined. A quarantine of a terminal run that is an hour old is
// kept even with lease-minutes 30, and recovered once it is past 240
// minutes.
func TestReapQuarantineGraceIsFixed(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := reaptest.New(t, cfgHealth)
		w.Env["INPUT_LEASE_MINUTES"] = "30"
		w.Env["INPUT_LEASE-MINUTES"] = "30"
		now := time.Now()
		runID := run(w, game, "completed", "failure")
		e := entry(game, runID, "r1", 0, now)
		q := lockstate.Reservation{ReservationID: "q-1", HolderID: e.HolderID, Repository: e.Repository, Workflow: e.Workflow, Job: e.Job,
			RunID: e.RunID, RunAttempt: e.RunAttempt, RunURL: e.RunURL, RunnerID: "r1", Reason: "cleanup-evidence-unknown",
			State: lockstate.ReservationQuarantine, CreatedAt: lockstate.FormatTime(now.Add(-time.Hour))}
		s := state(5)
		s.Reservations = []lockstate.Reservation{q}
		w.SeedState(s)

		require.NoError(t, reap.Run(context.Background(), deps(w, nil)))
		assert.Equal(t, []string{seedM}, w.Messages(), "an hour-old quarantine is inside the fixed grace")
		assert.Contains(t, w.Summary(), "younger than the 4h0m0s auto-recovery grace")

		time.Sleep(reap.DefaultLeaseGrace - time.Hour + time.Minute)
		require.NoError(t, reap.Run(context.Background(), deps(w, nil)))
		assert.Equal(t, []string{seedM, msgQ}, w.Messages())
		require.Len(t, w.State().Reservations, 1)
		assert.Equal(t, lockstate.ReservationCooldown, w.State().Reservations[0].State)
	})
}
