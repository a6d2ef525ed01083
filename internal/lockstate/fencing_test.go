package lockstate

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cfgFenced is a schema-6 config with maxOvertakes k and no cooldown, so a
// confirmed release frees its seat at once.
func cfgFenced(maxHolders, k int) Config {
	c := cfgHealth(maxHolders)
	c.FencedAdmission = true
	c.MaxOvertakes = k
	c.ReleaseCooldownSeconds = 0
	return c
}

// step runs Acquire and fails the test on error; it checks the universal
// post-conditions (input untouched, unchanged means equal, round trip).
func step(t *testing.T, s *State, cfg Config, id Identity, now time.Time) (*State, AcquireDecision) {
	t.Helper()
	before := s.Clone()
	out, d, err := Acquire(s, cfg, AcquireRequest{Identity: id, Lease: lease}, now)
	require.NoError(t, err)
	require.Equal(t, before, s, "input mutated")
	if !d.Changed {
		require.Equal(t, s, out)
	}
	mustEncodeDecode(t, out)
	return out, d
}

func release(t *testing.T, s *State, cfg Config, id Identity, now time.Time) *State {
	t.Helper()
	out, d, err := Cleanup(s, cfg, cleanupReq(id, confirmed), now)
	require.NoError(t, err)
	require.True(t, d.Changed)
	require.GreaterOrEqual(t, out.FencingToken, s.FencingToken, "cleanup moved the counter back")
	mustEncodeDecode(t, out)
	return out
}

func TestMigrate5To6(t *testing.T) {
	t.Parallel()
	a, b := ident(1, "r1"), ident(2, "r2")
	now := t0.Add(time.Minute)
	incident, err := IncidentFor(ident(50, "r9"), t0, "")
	require.NoError(t, err)
	cases := []struct {
		name  string
		state func() *State
		cfg   Config
		code  Code
		want  AcquireOutcome
		check func(t *testing.T, in, out *State, d AcquireDecision)
	}{
		{name: "drained schema 5 migrates and admits with token 1", state: func() *State { return stateAt(5) }, cfg: cfgFenced(1, 2), want: OutcomeAdmitted,
			check: func(t *testing.T, _, out *State, d AcquireDecision) {
				assert.Equal(t, 6, d.MigratedTo)
				assert.Equal(t, 6, out.SchemaVersion)
				assert.Equal(t, int64(1), d.FencingToken)
				assert.Equal(t, int64(1), out.FencingToken)
				assert.Equal(t, int64(1), out.Holders[0].FencingToken)
				assert.Nil(t, out.ActiveIncident)
			}},
		{name: "expired cooldown is pruned before the drain check", state: func() *State {
			s := stateAt(5)
			s.Reservations = []Reservation{cooldownOn("cd", "r8", now)}
			return s
		}, cfg: cfgFenced(1, 2), want: OutcomeAdmitted, check: func(t *testing.T, _, out *State, d AcquireDecision) {
			assert.Equal(t, 6, d.MigratedTo)
			assert.Empty(t, out.Reservations)
		}},
		{name: "holders pause admission", state: func() *State {
			s := stateAt(5)
			s.Holders = []Holder{holderFor(b, 5)}
			return s
		}, cfg: cfgFenced(2, 2), want: OutcomeQueued, check: func(t *testing.T, _, out *State, d AcquireDecision) {
			require.NotNil(t, d.Upgrade)
			assert.Equal(t, 5, d.Upgrade.From)
			assert.Equal(t, 6, d.Upgrade.To)
			assert.Equal(t, "fencedAdmission", d.Upgrade.Features())
			assert.Equal(t, 5, out.SchemaVersion)
			assert.Equal(t, 0, d.Rank, "first once drained")
		}},
		{name: "a queue is carried across with its order", state: func() *State {
			s := stateAt(5)
			s.Queue = []Entry{entryFor(b, 5)}
			return s
		}, cfg: cfgFenced(2, 2), want: OutcomeAdmitted, check: func(t *testing.T, _, out *State, d AcquireDecision) {
			// Two free seats: b keeps its place and a is admitted beside
			// it (co-selected, not counted as an overtake).
			assert.Equal(t, 6, d.MigratedTo)
			assert.Equal(t, int64(1), d.FencingToken)
			assert.Equal(t, b.HolderID, out.Queue[0].HolderID)
			assert.Zero(t, out.Queue[0].Overtakes)
		}},
		{name: "own queue entry is carried across", state: func() *State {
			s := stateAt(5)
			s.Queue = []Entry{entryFor(a, 5)}
			return s
		}, cfg: cfgFenced(2, 2), want: OutcomeAdmitted, check: func(t *testing.T, _, out *State, d AcquireDecision) {
			assert.Equal(t, 6, d.MigratedTo)
			assert.Empty(t, out.Queue)
		}},
		{name: "live quarantine pauses admission", state: func() *State {
			s := stateAt(5)
			s.Reservations = []Reservation{quarantineOn("q", "r8")}
			return s
		}, cfg: cfgFenced(2, 2), want: OutcomeQueued, check: func(t *testing.T, _, out *State, d AcquireDecision) {
			require.NotNil(t, d.Upgrade)
			assert.Len(t, d.Upgrade.Quarantines(), 1)
			assert.Equal(t, 5, out.SchemaVersion)
		}},
		{name: "live cooldown pauses admission", state: func() *State {
			s := stateAt(5)
			s.Reservations = []Reservation{cooldownOn("cd", "r8", now.Add(time.Second))}
			return s
		}, cfg: cfgFenced(2, 2), want: OutcomeQueued, check: func(t *testing.T, _, _ *State, d AcquireDecision) {
			require.NotNil(t, d.Upgrade)
			assert.Contains(t, d.Upgrade.Summary(), "cooldowns: 1")
		}},
		{name: "empty schema 4 climbs to 6 in one write", state: func() *State { return stateAt(4) }, cfg: cfgFenced(1, 2), want: OutcomeAdmitted,
			check: func(t *testing.T, _, out *State, d AcquireDecision) {
				assert.Equal(t, 6, d.MigratedTo)
				assert.Equal(t, int64(1), out.Holders[0].FencingToken)
				assert.Nil(t, out.ActiveIncident)
			}},
		{name: "empty schema 3 climbs to 6 in one write", state: func() *State { return stateAt(3) }, cfg: cfgFenced(1, 2), want: OutcomeAdmitted,
			check: func(t *testing.T, _, out *State, d AcquireDecision) {
				assert.Equal(t, 6, out.SchemaVersion)
				assert.Equal(t, []Reservation{}, out.Reservations)
			}},
		{name: "empty schema 2 climbs to 6 in one write", state: func() *State { return stateAt(2) }, cfg: cfgFenced(1, 2), want: OutcomeAdmitted,
			check: func(t *testing.T, _, out *State, d AcquireDecision) {
				assert.Equal(t, 6, out.SchemaVersion)
				assert.Equal(t, "r1", out.Holders[0].RunnerID)
				assert.Equal(t, int64(1), out.FencingToken)
			}},
		{name: "flag off never migrates", state: func() *State { return stateAt(5) }, cfg: cfgHealth(1), want: OutcomeAdmitted,
			check: func(t *testing.T, _, out *State, d AcquireDecision) {
				assert.Zero(t, d.MigratedTo)
				assert.Equal(t, 5, out.SchemaVersion)
				assert.Zero(t, d.FencingToken)
				assert.Zero(t, out.FencingToken)
				assert.Zero(t, out.Holders[0].FencingToken)
			}},
		{name: "flag off after migration keeps schema 6 and fencing", state: func() *State {
			s := stateAt(6)
			s.FencingToken = 7
			return s
		}, cfg: DefaultConfig(), want: OutcomeAdmitted, check: func(t *testing.T, _, out *State, d AcquireDecision) {
			assert.Zero(t, d.MigratedTo)
			assert.Equal(t, 6, out.SchemaVersion)
			assert.Equal(t, int64(8), d.FencingToken)
			assert.Equal(t, "r1", out.Holders[0].RunnerID, "schema 6 keeps runner serialization")
		}},
		{name: "schema 6 with the flag is not migrated again", state: func() *State {
			s := stateAt(6)
			s.FencingToken = 3
			return s
		}, cfg: cfgFenced(1, 2), want: OutcomeAdmitted, check: func(t *testing.T, _, out *State, d AcquireDecision) {
			assert.Zero(t, d.MigratedTo)
			assert.Equal(t, int64(4), out.FencingToken)
		}},
		{name: "active incident defers the step and blocks without a write", state: func() *State {
			s := stateAt(5)
			s.ActiveIncident = incident
			return s
		}, cfg: cfgFenced(1, 2), want: OutcomeAccountBlocked, check: func(t *testing.T, in, out *State, d AcquireDecision) {
			assert.False(t, d.Changed)
			assert.Zero(t, d.MigratedTo)
			assert.Equal(t, in, out)
		}},
		{name: "active incident wins over a pending upgrade", state: func() *State {
			s := stateAt(5)
			s.ActiveIncident = incident
			s.Queue = []Entry{entryFor(b, 5), entryFor(a, 5)}
			return s
		}, cfg: cfgFenced(1, 2), want: OutcomeAccountBlocked, check: func(t *testing.T, _, _ *State, d AcquireDecision) {
			assert.Equal(t, 2, d.Position)
		}},
		{name: "fenced admission without account health is an invalid config", state: func() *State { return stateAt(5) },
			cfg: Config{MaxHolders: 1, RunnerSerialization: true, ResourceLifecycle: true, FencedAdmission: true}, code: CodeInvalidConfig},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			in := c.state()
			before := in.Clone()
			out, d, err := Acquire(in, c.cfg, AcquireRequest{Identity: a, Lease: lease}, now)
			require.Equal(t, before, in, "input mutated")
			if c.code != "" {
				requireCode(t, err, c.code)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.want, d.Outcome)
			mustEncodeDecode(t, out)
			if c.check != nil {
				c.check(t, in, out, d)
			}
		})
	}
}

// TestMigrate5To6AfterIncidentRecovery walks the deferred step: blocked
// while the incident is active, paused (queued, no admission) while the
// recovery cooldown holds its seat, applied once the cooldown expired.
func TestMigrate5To6AfterIncidentRecovery(t *testing.T) {
	t.Parallel()
	cfg := cfgFenced(1, 2)
	cfg.ReleaseCooldownSeconds = 60
	inc, err := IncidentFor(ident(50, "r9"), t0, "")
	require.NoError(t, err)
	s := stateAt(5)
	s.ActiveIncident = inc
	a := ident(1, "r1")
	_, d := step(t, s, cfg, a, t0)
	require.Equal(t, OutcomeAccountBlocked, d.Outcome)

	s, _, err = RecoverIncident(s, cfg, inc.IncidentID, t0, "rec-1")
	require.NoError(t, err)
	s, d = step(t, s, cfg, a, t0.Add(time.Second))
	require.Equal(t, OutcomeQueued, d.Outcome)
	require.NotNil(t, d.Upgrade)
	assert.Equal(t, 5, s.SchemaVersion)

	out, d := step(t, s, cfg, a, t0.Add(time.Minute))
	assert.Equal(t, OutcomeAdmitted, d.Outcome)
	assert.Equal(t, 6, d.MigratedTo)
	assert.Equal(t, int64(1), d.FencingToken)
	assert.Empty(t, out.Reservations, "the expired recovery cooldown was pruned in the same write")
}

func TestFencingTokens(t *testing.T) {
	t.Parallel()
	cfg := cfgFenced(2, 2)
	a, b, c := ident(1, "r1"), ident(2, "r2"), ident(3, "r3")
	s := stateAt(6)
	now := t0

	s, d := step(t, s, cfg, a, now)
	require.Equal(t, OutcomeAdmitted, d.Outcome)
	assert.Equal(t, int64(1), d.FencingToken)
	s, d = step(t, s, cfg, b, now)
	assert.Equal(t, int64(2), d.FencingToken)

	// Already a holder: the stored token, no write.
	_, d = step(t, s, cfg, a, now)
	assert.Equal(t, OutcomeAlreadyHolder, d.Outcome)
	assert.False(t, d.Changed)
	assert.Equal(t, int64(1), d.FencingToken)
	// A jobId backfill keeps the token and the counter.
	s2, d := step(t, s, cfg, withJob(a, "77"), now)
	assert.True(t, d.Changed)
	assert.Equal(t, int64(1), d.FencingToken)
	assert.Equal(t, int64(1), FencingToken(s2, a.HolderID))
	assert.Equal(t, int64(2), s2.FencingToken)

	// Release and re-admission of the same holderId: a new, larger token.
	s = release(t, s, cfg, a, now)
	assert.Equal(t, int64(2), s.FencingToken)
	assert.Zero(t, FencingToken(s, a.HolderID))
	s, d = step(t, s, cfg, a, now)
	assert.Equal(t, int64(3), d.FencingToken)

	// A retracted admission burns its token: the next one is still larger.
	s = release(t, s, cfg, b, now)
	s, d = step(t, s, cfg, c, now)
	require.Equal(t, int64(4), d.FencingToken)
	out, cd, err := Cleanup(s, cfg, CleanupRequest{HolderID: c.HolderID, RunAttempt: "1", RunnerID: "r3", PreActivation: true}, now)
	require.NoError(t, err)
	require.True(t, cd.Released)
	assert.Equal(t, int64(4), out.FencingToken)
	s = out
	_, d = step(t, s, cfg, b, now)
	assert.Equal(t, int64(5), d.FencingToken)

	// Below schema 6 nothing carries a token.
	_, d = step(t, stateAt(5), cfgHealth(1), a, now)
	assert.Zero(t, d.FencingToken)
}

func TestFencingTokenSurvivesEveryTransition(t *testing.T) {
	t.Parallel()
	cfg := cfgFenced(3, 2)
	cfg.ReleaseCooldownSeconds = 30
	a, b := ident(1, "r1"), ident(2, "r2")
	now := t0
	s, _ := step(t, stateAt(6), cfg, a, now)
	s, _ = step(t, s, cfg, b, now)
	require.Equal(t, int64(2), s.FencingToken)

	// Unproven release: quarantine; operator recovery: cooldown.
	out, _, err := Cleanup(s, cfg, cleanupReq(a, unproven), now)
	require.NoError(t, err)
	assert.Equal(t, int64(2), out.FencingToken)
	out, _, err = RecoverQuarantine(out, cfg, "res-new", now)
	require.NoError(t, err)
	assert.Equal(t, int64(2), out.FencingToken)
	assert.Equal(t, int64(2), FencingToken(out, b.HolderID), "other holders keep their tokens")

	// Blocked release raises the incident; recovery keeps the counter.
	out, _, err = Cleanup(out, cfg, cleanupReq(b, blocked), now)
	require.NoError(t, err)
	require.NotNil(t, out.ActiveIncident)
	assert.Equal(t, int64(2), out.FencingToken)
	out, _, err = RecoverIncident(out, cfg, out.ActiveIncident.IncidentID, now, "rec-1")
	require.NoError(t, err)
	assert.Equal(t, int64(2), out.FencingToken)
	mustEncodeDecode(t, out)

	pruned, _ := PruneExpiredCooldowns(out, now.Add(time.Hour))
	assert.Equal(t, int64(2), pruned.FencingToken)
}

func TestReclaimIssuesTokenAndOvertakesNobody(t *testing.T) {
	t.Parallel()
	cfg := cfgFenced(2, 0) // strict FIFO: every blocked waiter is a barrier
	h, w, r := ident(1, "r1"), ident(2, "r1"), ident(3, "r2")
	s := stateAt(6)
	s.FencingToken = 10
	s.Holders = []Holder{holderTok(h, 6, 10)}
	s.Reservations = []Reservation{quarantineOn("q2", "r2")}
	s.Queue = []Entry{entryFor(w, 6)}
	assert.Equal(t, -1, AdmissibleRank(s, cfg, w.HolderID))

	out, d := step(t, s, cfg, r, t0)
	require.Equal(t, OutcomeAdmitted, d.Outcome, "a barrier never stops a same-runner reclaim")
	assert.True(t, d.QuarantineRecovered)
	assert.Equal(t, int64(11), d.FencingToken)
	assert.Equal(t, int64(11), FencingToken(out, r.HolderID))
	assert.Equal(t, 0, Overtakes(out, w.HolderID), "a reclaim takes no seat a waiter could use")
}

// TestBoundedOvertakingWorkedExample is the example of docs/state-schema.md.
func TestBoundedOvertakingWorkedExample(t *testing.T) {
	t.Parallel()
	cfg := cfgFenced(2, 2)
	h, w, x, y, z := ident(1, "r1"), ident(2, "r1"), ident(3, "r2"), ident(4, "r3"), ident(5, "r4")
	now := t0
	s, _ := step(t, stateAt(6), cfg, h, now) // H holds r1, token 1

	// W waits: its runner r1 is held by H.
	s, d := step(t, s, cfg, w, now)
	require.Equal(t, OutcomeQueued, d.Outcome)
	assert.Equal(t, -1, d.Rank)
	// A waiting poll writes nothing.
	_, d = step(t, s, cfg, w, now.Add(time.Minute))
	assert.False(t, d.Changed)

	// X on a free runner passes W: W.overtakes = 1.
	s, d = step(t, s, cfg, x, now)
	require.Equal(t, OutcomeAdmitted, d.Outcome)
	assert.Equal(t, int64(2), d.FencingToken)
	assert.Equal(t, 1, Overtakes(s, w.HolderID))
	s = release(t, s, cfg, x, now)

	// Y passes W too: W.overtakes = 2 = maxOvertakes, W is now a barrier.
	s, d = step(t, s, cfg, y, now)
	require.Equal(t, OutcomeAdmitted, d.Outcome)
	assert.Equal(t, 2, Overtakes(s, w.HolderID))
	s = release(t, s, cfg, y, now)

	// Z finds a free seat and a free runner but waits behind the barrier.
	s, d = step(t, s, cfg, z, now)
	require.Equal(t, OutcomeQueued, d.Outcome)
	assert.True(t, d.Changed, "joining the queue is a write")
	assert.Equal(t, -1, d.Rank)
	assert.Equal(t, 1, FreeSlots(s, cfg))
	assert.Equal(t, 2, Overtakes(s, w.HolderID), "a queue write never counts an overtake")
	_, d = step(t, s, cfg, z, now.Add(time.Minute))
	assert.False(t, d.Changed)
	assert.Equal(t, OutcomeQueued, d.Outcome)

	// H leaves: W is admitted next, then Z may go.
	s = release(t, s, cfg, h, now)
	assert.Equal(t, 0, AdmissibleRank(s, cfg, w.HolderID))
	assert.Equal(t, 1, AdmissibleRank(s, cfg, z.HolderID))
	s, d = step(t, s, cfg, w, now)
	require.Equal(t, OutcomeAdmitted, d.Outcome)
	assert.Equal(t, int64(4), d.FencingToken)
	assert.Equal(t, 0, Overtakes(s, z.HolderID), "Z was never passed")
	s, d = step(t, s, cfg, z, now)
	require.Equal(t, OutcomeAdmitted, d.Outcome)
	assert.Equal(t, int64(5), d.FencingToken)
	assert.Empty(t, s.Queue)
}

func TestOvertakingRules(t *testing.T) {
	t.Parallel()
	a, b, c := ident(1, "r1"), ident(2, "r1"), ident(3, "r2")
	hold := ident(9, "r1")
	type tc struct {
		name  string
		state func() *State
		cfg   Config
		id    Identity
		want  AcquireOutcome
		check func(t *testing.T, in, out *State, d AcquireDecision)
	}
	fenced := func(holders []Holder, queue ...Entry) func() *State {
		return func() *State {
			s := stateAt(6)
			s.Holders = append(s.Holders, holders...)
			for _, h := range holders {
				s.FencingToken = max(s.FencingToken, h.FencingToken)
			}
			s.Queue = queue
			return s
		}
	}
	withOvertakes := func(e Entry, n int) Entry { e.Overtakes = n; return e }
	cases := []tc{
		{name: "strict fifo: a blocked head stops a free runner", state: fenced([]Holder{holderTok(hold, 6, 1)}, entryFor(a, 6)),
			cfg: cfgFenced(3, 0), id: c, want: OutcomeQueued, check: func(t *testing.T, _, out *State, d AcquireDecision) {
				assert.Equal(t, -1, d.Rank)
				assert.Equal(t, 0, Overtakes(out, a.HolderID))
			}},
		{name: "co-selected waiters are not overtaken", state: fenced(nil, entryFor(ident(4, "r4"), 6), entryFor(c, 6)),
			cfg: cfgFenced(2, 0), id: c, want: OutcomeAdmitted, check: func(t *testing.T, _, out *State, d AcquireDecision) {
				assert.Equal(t, 0, out.Queue[0].Overtakes)
				assert.Equal(t, 0, AdmissibleRank(out, cfgFenced(2, 0), out.Queue[0].HolderID), "it kept its seat")
			}},
		{name: "a waiter behind its runner's pick is overtaken", state: fenced(nil, entryFor(a, 6), entryFor(b, 6), entryFor(c, 6)),
			cfg: cfgFenced(2, 1), id: c, want: OutcomeAdmitted, check: func(t *testing.T, _, out *State, _ AcquireDecision) {
				assert.Equal(t, 0, Overtakes(out, a.HolderID), "a was selected with c")
				assert.Equal(t, 1, Overtakes(out, b.HolderID), "b waits for a on r1")
			}},
		{name: "the same waiter is a barrier at maxOvertakes 0", state: fenced(nil, entryFor(a, 6), entryFor(b, 6), entryFor(c, 6)),
			cfg: cfgFenced(2, 0), id: c, want: OutcomeQueued},
		{name: "a barrier does not stop the waiters ahead of it", state: fenced([]Holder{holderTok(hold, 6, 1)}, entryFor(c, 6), withOvertakes(entryFor(a, 6), 2)),
			cfg: cfgFenced(2, 2), id: c, want: OutcomeAdmitted},
		{name: "lowering maxOvertakes keeps a barrier and never counts past it", state: fenced([]Holder{holderTok(hold, 6, 1)}, withOvertakes(entryFor(a, 6), 5)),
			cfg: cfgFenced(3, 2), id: c, want: OutcomeQueued, check: func(t *testing.T, _, out *State, _ AcquireDecision) {
				assert.Equal(t, 5, Overtakes(out, a.HolderID))
			}},
		{name: "raising maxOvertakes lifts the barrier", state: fenced([]Holder{holderTok(hold, 6, 1)}, withOvertakes(entryFor(a, 6), 2)),
			cfg: cfgFenced(3, 3), id: c, want: OutcomeAdmitted, check: func(t *testing.T, _, out *State, _ AcquireDecision) {
				assert.Equal(t, 3, Overtakes(out, a.HolderID))
			}},
		{name: "a rerun keeps its entry's overtakes", state: fenced([]Holder{holderTok(hold, 6, 1)}, withOvertakes(entryFor(a, 6), 1)),
			cfg: cfgFenced(3, 2), id: withAttempt(a, "2"), want: OutcomeQueued, check: func(t *testing.T, _, out *State, d AcquireDecision) {
				assert.True(t, d.Changed)
				assert.Equal(t, "2", out.Queue[0].RunAttempt)
				assert.Equal(t, 1, Overtakes(out, a.HolderID))
			}},
		{name: "a jobId backfill keeps overtakes", state: fenced([]Holder{holderTok(hold, 6, 1)}, withOvertakes(entryFor(a, 6), 1)),
			cfg: cfgFenced(3, 2), id: withJob(a, "55"), want: OutcomeQueued, check: func(t *testing.T, _, out *State, _ AcquireDecision) {
				assert.Equal(t, "55", out.Queue[0].JobID)
				assert.Equal(t, 1, Overtakes(out, a.HolderID))
			}},
		{name: "schema 5 never counts", state: func() *State {
			s := stateAt(5)
			s.Holders = []Holder{holderFor(hold, 5)}
			s.Queue = []Entry{entryFor(a, 5)}
			return s
		}, cfg: cfgHealth(3), id: c, want: OutcomeAdmitted, check: func(t *testing.T, _, out *State, _ AcquireDecision) {
			assert.Equal(t, 0, Overtakes(out, a.HolderID))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			in := c.state()
			out, d := step(t, in, c.cfg, c.id, t0)
			assert.Equal(t, c.want, d.Outcome)
			if c.check != nil {
				c.check(t, in, out, d)
			}
		})
	}
}

func TestAdmissibleRank(t *testing.T) {
	t.Parallel()
	inc, err := IncidentFor(ident(50, "r9"), t0, "")
	require.NoError(t, err)
	e := func(n int, runner string, schema int) Entry { return entryFor(ident(n, runner), schema) }
	id := func(n int) string { return ident(n, "").HolderID }

	s2 := stateAt(2)
	s2.Queue = []Entry{e(1, "", 2), e(2, "", 2), e(3, "", 2)}
	assert.Equal(t, 2, AdmissibleRank(s2, DefaultConfig(), id(3)), "without serialization the rank is the index")
	assert.Equal(t, -1, AdmissibleRank(s2, DefaultConfig(), "nobody"))

	s4 := stateAt(4)
	s4.Holders = []Holder{holderFor(ident(9, "r1"), 4)}
	s4.Reservations = []Reservation{quarantineOn("q", "r3"), cooldownOn("cd", "r5", t0.Add(time.Hour))}
	s4.Queue = []Entry{e(1, "r1", 4), e(2, "r2", 4), e(3, "r3", 4), e(4, "r2", 4), e(5, "r4", 4), e(6, "r5", 4), e(7, "r3", 4)}
	cfg := cfgLifecycle(8)
	want := map[int]int{1: -1, 2: 0, 3: 0, 4: -1, 5: 1, 6: -1, 7: -1}
	for n, rank := range want {
		assert.Equal(t, rank, AdmissibleRank(s4, cfg, id(n)), "entry %d", n)
	}
	// Reclaim needs freeSlots >= 0.
	assert.Equal(t, -1, AdmissibleRank(s4, cfgLifecycle(2), id(3)))

	s5 := stateAt(5)
	s5.Queue = []Entry{e(1, "r1", 5)}
	assert.Equal(t, 0, AdmissibleRank(s5, cfgHealth(1), id(1)))
	s5.ActiveIncident = inc
	assert.Equal(t, -1, AdmissibleRank(s5, cfgHealth(1), id(1)), "an incident blocks everyone")

	s6 := stateAt(6)
	s6.FencingToken = 1
	s6.Holders = []Holder{holderTok(ident(9, "r1"), 6, 1)}
	s6.Queue = []Entry{e(1, "r2", 6), e(2, "r1", 6), e(3, "r3", 6)}
	s6.Queue[1].Overtakes = 1
	assert.Equal(t, 1, AdmissibleRank(s6, cfgFenced(4, 2), id(3)))
	assert.Equal(t, -1, AdmissibleRank(s6, cfgFenced(4, 1), id(3)), "behind a barrier")
	assert.Equal(t, 0, AdmissibleRank(s6, cfgFenced(4, 1), id(1)), "ahead of the barrier")
}

// TestAcquireRankMatchesAdmission checks the contract the acquire action
// relies on: a queued caller with rank r is admitted by its next Acquire
// exactly when r is in 0..freeSlots-1.
func TestAcquireRankMatchesAdmission(t *testing.T) {
	t.Parallel()
	s := stateAt(6)
	s.FencingToken = 1
	s.Holders = []Holder{holderTok(ident(9, "r1"), 6, 1)}
	s.Queue = []Entry{entryFor(ident(1, "r1"), 6), entryFor(ident(2, "r2"), 6), entryFor(ident(3, "r3"), 6), entryFor(ident(4, "r2"), 6)}
	for maxHolders := 1; maxHolders <= 4; maxHolders++ {
		for k := 0; k <= 2; k++ {
			cfg := cfgFenced(maxHolders, k)
			for _, e := range s.Queue {
				rank := AdmissibleRank(s, cfg, e.HolderID)
				runner := e.RunnerID
				_, d := step(t, s, cfg, ident(int(e.RunID[0]-'0'), runner), t0)
				admitted := d.Outcome == OutcomeAdmitted
				assert.Equal(t, rank >= 0 && rank < FreeSlots(s, cfg), admitted, "max %d k %d %s rank %d", maxHolders, k, e.HolderID, rank)
				if !admitted {
					assert.Equal(t, rank, d.Rank)
				}
			}
		}
	}
}
