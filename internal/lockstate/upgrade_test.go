package lockstate

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// upgradeConfig returns the config that asks for target (2..6) with maxHolders.
func upgradeConfig(target, maxHolders int) Config {
	c := Config{MaxHolders: maxHolders, ReleaseCooldownSeconds: 0, MaxOvertakes: DefaultMaxOvertakes}
	c.RunnerSerialization = target >= 3
	c.ResourceLifecycle = target >= 4
	c.AccountHealth = target >= 5
	c.FencedAdmission = target >= 6
	return c
}

func TestTargetSchema(t *testing.T) {
	t.Parallel()
	assert.Equal(t, 2, TargetSchema(DefaultConfig()))
	for target := 2; target <= 6; target++ {
		assert.Equal(t, target, TargetSchema(upgradeConfig(target, 1)))
	}
}

// A brand-new lock (no state file: the empty schema-2 state the store
// returns) starts at the schema its config asks for in its first write, with
// the README's consumer inputs (a runner id), and every invariant of that
// schema holds in that first commit: the first holder is admitted at once.
func TestFreshLockStartsAtTheTargetSchema(t *testing.T) {
	t.Parallel()
	for target := 2; target <= 6; target++ {
		t.Run(fmt.Sprintf("schema %d", target), func(t *testing.T) {
			t.Parallel()
			cfg := upgradeConfig(target, 2)
			out, d := step(t, Empty(testLock), cfg, ident(1, "r1"), t0)
			require.Equal(t, OutcomeAdmitted, d.Outcome)
			assert.Equal(t, target, out.SchemaVersion)
			assert.Nil(t, d.Upgrade)
			if target > 2 {
				assert.Equal(t, target, d.MigratedTo)
				assert.Equal(t, "r1", out.Holders[0].RunnerID)
			}
			if target >= 4 {
				assert.Equal(t, []Reservation{}, out.Reservations)
			}
			if target >= 6 {
				assert.Equal(t, int64(1), out.FencingToken)
				assert.Equal(t, int64(1), d.FencingToken)
			}
			// The encoded first commit decodes at that schema.
			data, err := Encode(out)
			require.NoError(t, err)
			back, err := Decode(data, DecodeOptions{Lock: testLock})
			require.NoError(t, err)
			assert.Equal(t, target, back.SchemaVersion)
			// A second job joins and is admitted under the new rules.
			out2, d2 := step(t, out, cfg, ident(2, "r2"), t0.Add(time.Second))
			assert.Equal(t, OutcomeAdmitted, d2.Outcome)
			assert.Zero(t, d2.MigratedTo)
			assert.Equal(t, target, out2.SchemaVersion)
		})
	}
}

// The example config (serialization, lifecycle and account health at once)
// on a missing state file: the first acquire is admitted at schema 5.
func TestFreshLockWithTheExampleConfig(t *testing.T) {
	t.Parallel()
	cfg := Config{MaxHolders: 2, RunnerSerialization: true, ResourceLifecycle: true, AccountHealth: true, ReleaseCooldownSeconds: 360, MaxOvertakes: 2}
	out, d := step(t, Empty(testLock), cfg, ident(1, "win-01"), t0)
	require.Equal(t, OutcomeAdmitted, d.Outcome)
	assert.Equal(t, 5, out.SchemaVersion)
	assert.Nil(t, out.ActiveIncident)
}

// One drain per upgrade step, each with jobs arriving throughout: a holder
// admitted under the old rules keeps its seat, later jobs queue (a seat is
// free, admission is paused), the release of the last holder (or, past a
// cooldown, the next poll) writes the upgrade with the waiters in order, and
// the waiters are then admitted under the new rules.
func TestUpgradeDrainsInsteadOfRefusing(t *testing.T) {
	t.Parallel()
	for from := 2; from <= 5; from++ {
		for to := from + 1; to <= 6; to++ {
			t.Run(fmt.Sprintf("%d to %d", from, to), func(t *testing.T) {
				t.Parallel()
				h, w1, w2 := ident(1, "r1"), ident(2, "r2"), ident(3, "r3")
				s := stateAt(from)
				s.Holders = []Holder{holderFor(h, from)}
				cfg := upgradeConfig(to, 3)
				cfg.ReleaseCooldownSeconds = 60

				now := t0.Add(time.Minute)
				s, d := step(t, s, cfg, w1, now)
				require.Equal(t, OutcomeQueued, d.Outcome, "a free seat, but admission is paused")
				require.NotNil(t, d.Upgrade)
				assert.Equal(t, from, s.SchemaVersion)
				assert.Equal(t, []string{h.HolderID}, d.Upgrade.Holders)
				assert.Equal(t, 0, d.Rank)
				s, d = step(t, s, cfg, w2, now)
				require.Equal(t, OutcomeQueued, d.Outcome)
				assert.Equal(t, 1, d.Rank)
				// A waiting poll writes nothing.
				_, d = step(t, s, cfg, w1, now.Add(time.Second))
				assert.False(t, d.Changed)

				// The holder releases with confirmed cleanup.
				out, cd, err := Cleanup(s, cfg, cleanupReq(h, confirmed), now.Add(2*time.Second))
				require.NoError(t, err)
				require.True(t, cd.Released)
				s = out
				if from < 4 {
					// No reservations below 4: the release drained the lock
					// and carries the upgrade.
					assert.Equal(t, to, cd.MigratedTo)
				} else if to >= 5 {
					// Its cooldown blocks the step until it expires.
					assert.Zero(t, cd.MigratedTo)
					_, d = step(t, s, cfg, w1, now.Add(3*time.Second))
					require.Equal(t, OutcomeQueued, d.Outcome)
					require.NotNil(t, d.Upgrade)
					now = now.Add(2 * time.Minute)
				}
				s, d = step(t, s, cfg, w1, now.Add(3*time.Second))
				require.Equal(t, OutcomeAdmitted, d.Outcome)
				assert.Equal(t, to, s.SchemaVersion)
				assert.Equal(t, "r1", runnerOfOrEmpty(s, h.HolderID), "the released holder is gone")
				s, d = step(t, s, cfg, w2, now.Add(4*time.Second))
				require.Equal(t, OutcomeAdmitted, d.Outcome)
				if to >= 6 {
					assert.Equal(t, int64(2), d.FencingToken)
				}
				if to >= 3 {
					assert.Equal(t, "r3", s.Holders[HolderIndex(s, w2.HolderID)].RunnerID)
				}
			})
		}
	}
}

// runnerOfOrEmpty returns "r1" when holderID is gone (the test's marker
// that the released holder did not survive the upgrade).
func runnerOfOrEmpty(s *State, holderID string) string {
	if HolderIndex(s, holderID) >= 0 {
		return "still held"
	}
	return "r1"
}

// A quarantine blocks a step that adds the incident or fencing: it does not
// end by itself. A job on its runner reclaims it (a reclaim is admitted
// while paused: it takes no free seat), or an operator recovers it.
func TestUpgradeQuarantineBlocksUntilReclaimedOrRecovered(t *testing.T) {
	t.Parallel()
	cfg := upgradeConfig(5, 2)
	s := stateAt(4)
	s.Reservations = []Reservation{quarantineOn("q-1", "r1")}
	other := ident(2, "r2")
	s, d := step(t, s, cfg, other, t0)
	require.Equal(t, OutcomeQueued, d.Outcome)
	require.NotNil(t, d.Upgrade)
	require.Len(t, d.Upgrade.Quarantines(), 1)
	assert.Contains(t, d.Upgrade.Summary(), "quarantines: 1")

	t.Run("reclaimed by a job on its runner", func(t *testing.T) {
		t.Parallel()
		out, d := step(t, s, cfg, ident(1, "r1"), t0.Add(time.Second))
		require.Equal(t, OutcomeAdmitted, d.Outcome)
		assert.True(t, d.QuarantineRecovered)
		assert.Equal(t, 4, out.SchemaVersion, "the reclaimed holder still blocks")
		// It releases with no cooldown: the release carries the upgrade.
		out, cd, err := Cleanup(out, cfg, cleanupReq(ident(1, "r1"), confirmed), t0.Add(2*time.Second))
		require.NoError(t, err)
		assert.Equal(t, 5, cd.MigratedTo)
		assert.Equal(t, other.HolderID, out.Queue[0].HolderID)
	})
	t.Run("recovered by an operator", func(t *testing.T) {
		t.Parallel()
		out, _, err := RecoverQuarantine(s, cfg, "q-1", t0.Add(time.Second))
		require.NoError(t, err)
		out, d := step(t, out, cfg, other, t0.Add(2*time.Second))
		assert.Equal(t, OutcomeAdmitted, d.Outcome)
		assert.Equal(t, 5, out.SchemaVersion)
	})
}

// At the step to schema 3 every queued job needs a runner id: a waiter that
// joined before its job read the new config records it on its next poll; one
// that never does (the reference's entry) holds the upgrade until it leaves.
func TestUpgradeToSerializationWaitsForRunnerIDs(t *testing.T) {
	t.Parallel()
	cfg := upgradeConfig(3, 2)
	old := ident(1, "r1")
	s := stateAt(2)
	s.Queue = []Entry{entryFor(old, 2)} // queued under the old config
	s.Holders = []Holder{holderFor(ident(9, "r9"), 2)}
	late := ident(2, "r2")
	s, d := step(t, s, cfg, late, t0)
	require.Equal(t, OutcomeQueued, d.Outcome)
	assert.Equal(t, []string{old.HolderID}, d.Upgrade.Unready)
	// The holder leaves; old's entry still has no runner id.
	s, cd, err := Cleanup(s, cfg, cleanupReq(ident(9, "r9"), confirmed), t0.Add(time.Second))
	require.NoError(t, err)
	assert.Zero(t, cd.MigratedTo)
	// late polls: still paused, old's id is missing.
	_, d = step(t, s, cfg, late, t0.Add(2*time.Second))
	require.NotNil(t, d.Upgrade)
	assert.Contains(t, d.Upgrade.Summary(), "without a recorded runner id: 1")
	// old polls with the new config: it supplies its own runner id, so the
	// upgrade lands in its write, with old first (two seats: both admitted
	// in turn).
	s, d = step(t, s, cfg, old, t0.Add(3*time.Second))
	require.Equal(t, OutcomeAdmitted, d.Outcome)
	assert.Equal(t, 3, d.MigratedTo)
	assert.Equal(t, "r1", s.Holders[0].RunnerID)
	assert.Equal(t, "r2", s.Queue[0].RunnerID)
}

// The reference drops pendingRunnerId like every key it does not know; this
// port writes it only on schema-2 queue entries and refuses it anywhere
// else or in a bad shape.
func TestPendingRunnerIDCodec(t *testing.T) {
	t.Parallel()
	s := stateAt(2)
	e := entryFor(ident(1, "r1"), 2)
	e.PendingRunnerID = "win-01"
	s.Queue = []Entry{e}
	data, err := Encode(s)
	require.NoError(t, err)
	assert.Contains(t, string(data), `"pendingRunnerId": "win-01"`)
	back, err := Decode(data, DecodeOptions{Lock: testLock})
	require.NoError(t, err)
	assert.Equal(t, "win-01", back.Queue[0].PendingRunnerID)

	for name, v := range map[string]string{
		"not a string": `42`, "empty": `""`, "padded": `" win-01"`, "control": `"a\u0007b"`, "too long": `"` + strings.Repeat("x", MaxRunnerNameBytes+1) + `"`,
	} {
		bad := strings.Replace(string(data), `"win-01"`, v, 1)
		_, err := Decode([]byte(bad), DecodeOptions{Lock: testLock})
		requireCode(t, err, CodeInvalidRunnerIdentity)
		_ = name
	}
	// At schema 3 the key means nothing and is dropped, like any unknown key.
	s3 := strings.Replace(strings.Replace(string(data), `"schemaVersion": 2`, `"schemaVersion": 3`, 1),
		`"queuedAt": "`+e.QueuedAt+`"`, `"queuedAt": "`+e.QueuedAt+`",
      "runnerId": "r1"`, 1)
	back, err = Decode([]byte(s3), DecodeOptions{Lock: testLock})
	require.NoError(t, err)
	assert.Empty(t, back.Queue[0].PendingRunnerID)
	// In memory, a holder or a schema-3 entry may not carry it.
	bad := stateAt(3)
	be := entryFor(ident(1, "r1"), 3)
	be.PendingRunnerID = "r1"
	bad.Queue = []Entry{be}
	_, err = Encode(bad)
	requireCode(t, err, CodeInvalidState)
}

// Turning the flag off again before the drain ends: the recorded runner ids
// are dropped by the next write and admission resumes at the old schema.
func TestUpgradeCancelledBeforeItLands(t *testing.T) {
	t.Parallel()
	s := stateAt(2)
	s.Holders = []Holder{holderFor(ident(9, "r9"), 2)}
	s, d := step(t, s, upgradeConfig(3, 2), ident(1, "r1"), t0)
	require.Equal(t, OutcomeQueued, d.Outcome)
	require.Equal(t, "r1", s.Queue[0].PendingRunnerID)
	s, d = step(t, s, upgradeConfig(2, 2), ident(1, "r1"), t0.Add(time.Second))
	require.Equal(t, OutcomeAdmitted, d.Outcome)
	assert.Equal(t, 2, s.SchemaVersion)
	data, err := Encode(s)
	require.NoError(t, err)
	assert.NotContains(t, string(data), "pendingRunnerId")
}

// TestPropertyUpgradeUnderArrivals: a busy lock at a random schema, a config
// that asks for a random higher one, and jobs that keep arriving, polling
// and releasing. Nobody is ever refused for the upgrade, nobody is admitted
// while it drains (reclaims aside), and once nothing is left to drain the
// very next acquire or release writes it.
func TestPropertyUpgradeUnderArrivals(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(rt *rapid.T) {
		from := rapid.IntRange(2, 5).Draw(rt, "from")
		to := rapid.IntRange(from+1, 6).Draw(rt, "to")
		seats := rapid.IntRange(1, 3).Draw(rt, "seats")
		cfg := upgradeConfig(from, seats)
		cfg.ReleaseCooldownSeconds = rapid.SampledFrom([]int{0, 30}).Draw(rt, "cooldown")
		now := t0
		s := stateAt(from)
		var ids []Identity
		var holding []Identity
		newJob := func() Identity {
			id := ident(len(ids)+1, fmt.Sprintf("r%d", len(ids)+1))
			ids = append(ids, id)
			return id
		}
		poll := func(id Identity) AcquireDecision {
			before := s.Clone()
			out, d, err := Acquire(s, cfg, AcquireRequest{Identity: id, Lease: time.Hour}, now)
			if err != nil {
				rt.Fatalf("acquire %s at schema %d (config asks %d): %v", id.HolderID, s.SchemaVersion, TargetSchema(cfg), err)
			}
			if d.Upgrade != nil && d.Outcome == OutcomeAdmitted && !d.QuarantineRecovered {
				rt.Fatalf("admitted while draining")
			}
			if PlanUpgrade(before, cfg, now).Pending() && d.MigratedTo == 0 && d.Upgrade == nil && d.Outcome != OutcomeAccountBlocked && d.Outcome != OutcomeAlreadyHolder {
				// ready for this caller but not written: impossible
				rt.Fatalf("a ready upgrade was not written by %s", id.HolderID)
			}
			s = out
			if d.Outcome == OutcomeAdmitted {
				holding = append(holding, id)
			}
			return d
		}
		// A busy lock under the old config.
		for range rapid.IntRange(1, seats+2).Draw(rt, "initial") {
			poll(newJob())
		}
		cfg = upgradeConfig(to, seats)
		cfg.ReleaseCooldownSeconds = rapid.SampledFrom([]int{0, 30}).Draw(rt, "cooldown2")
		nextRes := 0
		release := func(id Identity) {
			nextRes++
			req := cleanupReq(id, confirmed)
			req.ReservationID = fmt.Sprintf("res-%d", nextRes)
			out, d, err := Cleanup(s, cfg, req, now)
			if err != nil {
				rt.Fatalf("release %s: %v", id.HolderID, err)
			}
			if d.MigratedTo != 0 && d.MigratedTo != TargetSchema(cfg) {
				rt.Fatalf("release upgraded to %d", d.MigratedTo)
			}
			s = out
		}
		upgradedAt := -1
		for i := range rapid.IntRange(1, 60).Draw(rt, "steps") {
			switch rapid.IntRange(0, 3).Draw(rt, "action") {
			case 0:
				poll(newJob())
			case 1:
				for _, e := range append([]Entry(nil), s.Queue...) {
					poll(Identity{HolderID: e.HolderID, Repository: e.Repository, Workflow: e.Workflow, Job: e.Job, RunID: e.RunID, RunAttempt: e.RunAttempt, RunURL: e.RunURL, RunnerID: "r" + e.RunID})
				}
			case 2:
				if len(holding) == 0 {
					continue
				}
				k := rapid.IntRange(0, len(holding)-1).Draw(rt, "who")
				release(holding[k])
				holding = append(holding[:k], holding[k+1:]...)
			case 3:
				now = now.Add(time.Duration(rapid.IntRange(1, 40).Draw(rt, "advance")) * time.Second)
			}
			if s.SchemaVersion == to && upgradedAt < 0 {
				upgradedAt = i
			}
		}
		// Drain to the end: release every holder, let cooldowns expire,
		// and poll the queue once: the upgrade must have been written.
		for _, h := range holding {
			release(h)
		}
		holding = nil
		now = now.Add(time.Hour)
		// Every waiter polls once (in order): those that joined before
		// the config asked for runner serialization record their runner
		// id, and the poll that finds nothing left to drain writes the
		// upgrade.
		if len(s.Queue) == 0 {
			poll(newJob())
		}
		for _, e := range append([]Entry(nil), s.Queue...) {
			if s.SchemaVersion == to {
				break
			}
			poll(Identity{HolderID: e.HolderID, Repository: e.Repository, Workflow: e.Workflow, Job: e.Job, RunID: e.RunID, RunAttempt: e.RunAttempt, RunURL: e.RunURL, RunnerID: "r" + e.RunID})
		}
		if s.SchemaVersion != to {
			rt.Fatalf("drained lock still at schema %d, config asks %d", s.SchemaVersion, to)
		}
	})
}

// A waiter that recorded a runner id for an upgrade that was then cancelled
// (the flag turned off) and is handed a seat by a release (schema 2) holds
// it without the note: pendingRunnerId is never on a holder. Found by
// TestPropertyTransitions.
func TestHandoffDropsAStalePendingRunnerID(t *testing.T) {
	t.Parallel()
	s := stateAt(2)
	h := ident(9, "r9")
	s.Holders = []Holder{holderFor(h, 2)}
	s, d := step(t, s, upgradeConfig(3, 1), ident(1, "r1"), t0)
	require.Equal(t, OutcomeQueued, d.Outcome)
	require.Equal(t, "r1", s.Queue[0].PendingRunnerID)
	cfg := upgradeConfig(2, 1) // the operator turned serialization off again
	out, cd, err := Cleanup(s, cfg, cleanupReq(h, confirmed), t0.Add(time.Second))
	require.NoError(t, err)
	require.True(t, cd.Released)
	out, hd, err := Handoff(out, cfg, t0.Add(time.Second))
	require.NoError(t, err)
	require.Equal(t, []string{ident(1, "r1").HolderID}, hd.Admitted)
	assert.Empty(t, out.Holders[0].PendingRunnerID)
	mustEncodeDecode(t, out)
}

// TestStaleAttemptOwnsNothingWhileAnUpgradeToTheFenceIsPending: on a
// schema-2 lock the reference has no run-attempt fence, but once an upgrade
// to schema 3 or later is pending, a cleanup may write the upgrade in the
// same state, so a stale attempt's release must not remove a newer attempt's
// entry (found by the simulation: a zombie attempt 1 released attempt 2's
// queue entry in the write that upgraded the lock to schema 3). Its own
// entry is still its own, and without a pending upgrade schema 2 keeps the
// reference's holder-id ownership.
func TestStaleAttemptOwnsNothingWhileAnUpgradeToTheFenceIsPending(t *testing.T) {
	t.Parallel()
	old, newer := ident(7, ""), ident(7, "")
	newer.RunAttempt = "2"
	other := ident(8, "")
	s := stateAt(2)
	s.Holders = []Holder{holderFor(other, 2)}
	s.Queue = []Entry{entryFor(newer, 2)}
	stale := CleanupRequest{HolderID: old.HolderID, RunAttempt: "1", Identity: old}

	out, d, err := Cleanup(s, upgradeConfig(3, 1), stale, t0)
	require.NoError(t, err)
	assert.False(t, d.QueueCleaned, "attempt 1 owns nothing of attempt 2 while the fence is pending")
	assert.Equal(t, s.Queue, out.Queue)

	own := s.Clone()
	own.Queue = []Entry{entryFor(old, 2)}
	out, d, err = Cleanup(own, upgradeConfig(3, 1), stale, t0)
	require.NoError(t, err)
	assert.True(t, d.QueueCleaned, "its own attempt's entry is its own")
	assert.Empty(t, out.Queue)

	out, d, err = Cleanup(s, Config{MaxHolders: 1}, stale, t0)
	require.NoError(t, err)
	assert.True(t, d.QueueCleaned, "schema 2 without a pending upgrade: the reference's holder-id ownership")
	assert.Empty(t, out.Queue)
}
