package lockstate

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const lease = 4 * time.Hour

func cfgSerial(max int) Config {
	return Config{MaxHolders: max, RunnerSerialization: true, ReleaseCooldownSeconds: 360}
}

func cfgLifecycle(max int) Config {
	c := cfgSerial(max)
	c.ResourceLifecycle = true
	return c
}

func cfgHealth(max int) Config {
	c := cfgLifecycle(max)
	c.AccountHealth = true
	return c
}

func withAttempt(id Identity, attempt string) Identity {
	id.RunAttempt = attempt
	return id
}

func withJob(id Identity, job string) Identity {
	id.JobID = job
	return id
}

func TestAcquire(t *testing.T) {
	t.Parallel()
	a, b, c := ident(1, "r1"), ident(2, "r2"), ident(3, "r1")
	incident, err := IncidentFor(ident(50, "r9"), t0, "")
	require.NoError(t, err)
	now := t0.Add(time.Minute)

	type tc struct {
		name  string
		state func() *State
		cfg   Config
		id    Identity
		want  AcquireOutcome
		code  Code
		check func(t *testing.T, in, out *State, d AcquireDecision)
	}
	cases := []tc{
		{name: "empty lock admits in one write", state: func() *State { return stateAt(2) }, cfg: DefaultConfig(), id: a, want: OutcomeAdmitted,
			check: func(t *testing.T, _, out *State, d AcquireDecision) {
				assert.True(t, d.Changed)
				require.Len(t, out.Holders, 1)
				assert.Empty(t, out.Queue)
				h := out.Holders[0]
				assert.Empty(t, h.RunnerID, "schema 2 never stores runnerId")
				assert.Equal(t, FormatTime(t0), h.QueuedAt, "holder queuedAt comes from the identity")
				assert.Equal(t, FormatTime(now), h.AcquiredAt)
				assert.Equal(t, FormatTime(now.Add(lease)), h.ExpiresAt)
				assert.Equal(t, FormatTime(now), out.UpdatedAt)
			}},
		{name: "full lock queues", state: func() *State {
			s := stateAt(2)
			s.Holders = []Holder{holderFor(b, 2)}
			return s
		}, cfg: DefaultConfig(), id: a, want: OutcomeQueued, check: func(t *testing.T, _, out *State, d AcquireDecision) {
			assert.True(t, d.Changed)
			assert.Equal(t, 1, d.Position)
			assert.Equal(t, []Entry{entryFor(a, 2)}, out.Queue)
		}},
		{name: "waiting poll writes nothing on schema 2 despite runner id", state: func() *State {
			s := stateAt(2)
			s.Holders = []Holder{holderFor(b, 2)}
			s.Queue = []Entry{entryFor(c, 2), entryFor(a, 2)}
			return s
		}, cfg: DefaultConfig(), id: a, want: OutcomeQueued, check: func(t *testing.T, in, out *State, d AcquireDecision) {
			assert.False(t, d.Changed)
			assert.Equal(t, 2, d.Position)
			assert.Equal(t, in, out)
		}},
		{name: "waiting poll on schema 2 collapses duplicates without a write", state: func() *State {
			s := stateAt(2)
			s.Holders = []Holder{holderFor(b, 2)}
			s.Queue = []Entry{entryFor(c, 2), entryFor(c, 2), entryFor(a, 2)}
			return s
		}, cfg: DefaultConfig(), id: a, want: OutcomeQueued, check: func(t *testing.T, in, out *State, d AcquireDecision) {
			assert.False(t, d.Changed)
			assert.Equal(t, 2, d.Position, "position counts deduped entries")
			assert.Equal(t, in, out)
		}},
		{name: "non-serialized takes the first free entries", state: func() *State {
			s := stateAt(2)
			s.Holders = []Holder{holderFor(ident(9, ""), 2)}
			s.Queue = []Entry{entryFor(c, 2), entryFor(a, 2)}
			return s
		}, cfg: Config{MaxHolders: 2, ReleaseCooldownSeconds: 360}, id: a, want: OutcomeQueued},
		{name: "non-serialized admits the head", state: func() *State {
			s := stateAt(2)
			s.Holders = []Holder{holderFor(ident(9, ""), 2)}
			s.Queue = []Entry{entryFor(c, 2), entryFor(a, 2)}
			return s
		}, cfg: Config{MaxHolders: 2, ReleaseCooldownSeconds: 360}, id: c, want: OutcomeAdmitted, check: func(t *testing.T, _, out *State, _ AcquireDecision) {
			assert.Equal(t, []Entry{entryFor(a, 2)}, out.Queue)
		}},
		{name: "already holder writes nothing", state: func() *State {
			s := stateAt(3)
			s.Holders = []Holder{holderFor(a, 3)}
			return s
		}, cfg: cfgSerial(1), id: a, want: OutcomeAlreadyHolder, check: func(t *testing.T, in, out *State, d AcquireDecision) {
			assert.False(t, d.Changed)
			assert.Equal(t, in, out)
		}},
		{name: "already holder backfills job id", state: func() *State {
			s := stateAt(3)
			s.Holders = []Holder{holderFor(a, 3)}
			return s
		}, cfg: cfgSerial(1), id: withJob(a, "77"), want: OutcomeAlreadyHolder, check: func(t *testing.T, _, out *State, d AcquireDecision) {
			assert.True(t, d.Changed)
			assert.Equal(t, "77", out.Holders[0].JobID)
		}},
		{name: "schema 2 rerun is already holder", state: func() *State {
			s := stateAt(2)
			s.Holders = []Holder{holderFor(a, 2)}
			return s
		}, cfg: DefaultConfig(), id: withAttempt(a, "2"), want: OutcomeAlreadyHolder},
		{name: "holder fence stale attempt", state: func() *State {
			s := stateAt(3)
			s.Holders = []Holder{holderFor(withAttempt(a, "3"), 3)}
			return s
		}, cfg: cfgSerial(1), id: withAttempt(a, "2"), code: CodeStaleRunAttempt},
		{name: "holder fence newer attempt", state: func() *State {
			s := stateAt(3)
			s.Holders = []Holder{holderFor(a, 3)}
			return s
		}, cfg: cfgSerial(1), id: withAttempt(a, "2"), code: CodeHolderEarlierAttempt},
		{name: "holder fence other runner", state: func() *State {
			s := stateAt(3)
			s.Holders = []Holder{holderFor(a, 3)}
			return s
		}, cfg: cfgSerial(1), id: func() Identity { x := a; x.RunnerID = "r7"; return x }(), code: CodeConflictingIdentity},
		{name: "holder fence other job", state: func() *State {
			s := stateAt(3)
			s.Holders = []Holder{holderFor(withJob(a, "5"), 3)}
			return s
		}, cfg: cfgSerial(1), id: withJob(a, "6"), code: CodeConflictingIdentity},
		{name: "holder fence non canonical attempt", state: func() *State {
			s := stateAt(3)
			s.Holders = []Holder{holderFor(a, 3)}
			return s
		}, cfg: cfgSerial(1), id: withAttempt(a, "01"), code: CodeInvalidRunAttempt},
		{name: "queue fence stale attempt", state: func() *State {
			s := stateAt(3)
			s.Holders = []Holder{holderFor(b, 3)}
			s.Queue = []Entry{entryFor(withAttempt(a, "2"), 3)}
			return s
		}, cfg: cfgSerial(1), id: a, code: CodeStaleRunAttempt},
		{name: "queue newer attempt refreshes in place", state: func() *State {
			s := stateAt(3)
			s.Holders = []Holder{holderFor(b, 3)}
			s.Queue = []Entry{entryFor(a, 3), entryFor(ident(4, "r4"), 3)}
			return s
		}, cfg: cfgSerial(1), id: func() Identity { x := withAttempt(a, "2"); x.RunnerID = "r5"; return x }(), want: OutcomeQueued,
			check: func(t *testing.T, _, out *State, d AcquireDecision) {
				assert.True(t, d.Changed)
				assert.Equal(t, 1, d.Position)
				assert.Equal(t, "2", out.Queue[0].RunAttempt)
				assert.Equal(t, "r5", out.Queue[0].RunnerID)
			}},
		{name: "queue same attempt backfills job id", state: func() *State {
			s := stateAt(3)
			s.Holders = []Holder{holderFor(b, 3)}
			s.Queue = []Entry{entryFor(a, 3)}
			return s
		}, cfg: cfgSerial(1), id: withJob(a, "88"), want: OutcomeQueued, check: func(t *testing.T, _, out *State, d AcquireDecision) {
			assert.True(t, d.Changed)
			assert.Equal(t, "88", out.Queue[0].JobID)
		}},
		{name: "serialized skips an occupied runner", state: func() *State {
			s := stateAt(3)
			s.Holders = []Holder{holderFor(ident(9, "r1"), 3)}
			s.Queue = []Entry{entryFor(c, 3), entryFor(b, 3)}
			return s
		}, cfg: cfgSerial(2), id: b, want: OutcomeAdmitted, check: func(t *testing.T, _, out *State, _ AcquireDecision) {
			assert.Equal(t, []Entry{entryFor(c, 3)}, out.Queue)
			assert.Equal(t, "r2", out.Holders[1].RunnerID)
		}},
		{name: "serialized blocks the occupied runner", state: func() *State {
			s := stateAt(3)
			s.Holders = []Holder{holderFor(ident(9, "r1"), 3)}
			s.Queue = []Entry{entryFor(c, 3), entryFor(b, 3)}
			return s
		}, cfg: cfgSerial(2), id: c, want: OutcomeQueued},
		{name: "serialized one slot per distinct runner", state: func() *State {
			s := stateAt(3)
			s.Queue = []Entry{entryFor(a, 3), entryFor(c, 3), entryFor(b, 3)}
			return s
		}, cfg: cfgSerial(2), id: c, want: OutcomeQueued},
		{name: "serialized scan reaches second runner", state: func() *State {
			s := stateAt(3)
			s.Queue = []Entry{entryFor(a, 3), entryFor(c, 3), entryFor(b, 3)}
			return s
		}, cfg: cfgSerial(2), id: b, want: OutcomeAdmitted},
		{name: "runner id required", state: func() *State { return stateAt(3) }, cfg: DefaultConfig(), id: ident(1, " "), code: CodeRunnerIDRequired},
		{name: "migrate 2 to 3", state: func() *State { return stateAt(2) }, cfg: cfgSerial(1), id: a, want: OutcomeAdmitted,
			check: func(t *testing.T, _, out *State, d AcquireDecision) {
				assert.Equal(t, 3, d.MigratedTo)
				assert.Equal(t, 3, out.SchemaVersion)
				assert.Equal(t, "r1", out.Holders[0].RunnerID)
			}},
		{name: "migrate 2 to 3 waits for a queued job's runner id", state: func() *State {
			s := stateAt(2)
			s.Queue = []Entry{entryFor(b, 2)}
			return s
		}, cfg: cfgSerial(1), id: a, want: OutcomeQueued,
			check: func(t *testing.T, _, out *State, d AcquireDecision) {
				// b's entry carries no runner id yet: admission pauses, the
				// caller joins behind it and records its own.
				assert.Zero(t, d.MigratedTo)
				require.NotNil(t, d.Upgrade)
				assert.Equal(t, []string{b.HolderID}, d.Upgrade.Unready)
				assert.Equal(t, 2, out.SchemaVersion)
				assert.Equal(t, "r1", out.Queue[1].PendingRunnerID)
				assert.Equal(t, 1, d.Rank, "rank once drained: b first")
			}},
		{name: "migrate 2 to 3 carries the queue in order", state: func() *State {
			s := stateAt(2)
			e := entryFor(b, 2)
			e.PendingRunnerID = "r2"
			s.Queue = []Entry{e}
			return s
		}, cfg: cfgSerial(1), id: a, want: OutcomeQueued,
			check: func(t *testing.T, _, out *State, d AcquireDecision) {
				// Nothing to drain: the upgrade lands in the caller's join,
				// b keeps the head and takes its recorded runner id.
				assert.Equal(t, 3, d.MigratedTo)
				assert.Equal(t, 3, out.SchemaVersion)
				assert.Equal(t, []string{b.HolderID, a.HolderID}, []string{out.Queue[0].HolderID, out.Queue[1].HolderID})
				assert.Equal(t, "r2", out.Queue[0].RunnerID)
				assert.Empty(t, out.Queue[0].PendingRunnerID)
				assert.Equal(t, "r1", out.Queue[1].RunnerID)
			}},
		{name: "migrate 3 to 4", state: func() *State { return stateAt(3) }, cfg: cfgLifecycle(1), id: a, want: OutcomeAdmitted,
			check: func(t *testing.T, _, out *State, d AcquireDecision) {
				assert.Equal(t, 4, d.MigratedTo)
				assert.NotNil(t, out.Reservations)
			}},
		{name: "migrate 2 to 4 in one write on an empty lock", state: func() *State { return stateAt(2) }, cfg: cfgLifecycle(1), id: a, want: OutcomeAdmitted,
			check: func(t *testing.T, _, out *State, d AcquireDecision) {
				assert.Equal(t, 4, d.MigratedTo)
				assert.Equal(t, 4, out.SchemaVersion)
				assert.Equal(t, []Reservation{}, out.Reservations)
				assert.Equal(t, "r1", out.Holders[0].RunnerID)
			}},
		{name: "migrate 3 to 4 pauses while a holder drains", state: func() *State {
			s := stateAt(3)
			s.Holders = []Holder{holderFor(b, 3)}
			return s
		}, cfg: cfgLifecycle(2), id: a, want: OutcomeQueued,
			check: func(t *testing.T, _, out *State, d AcquireDecision) {
				// A seat is free, but admission is paused until b releases.
				assert.True(t, d.Changed)
				assert.Equal(t, 3, out.SchemaVersion)
				require.NotNil(t, d.Upgrade)
				assert.Equal(t, []string{b.HolderID}, d.Upgrade.Holders)
				assert.Equal(t, 0, d.Rank)
				assert.Equal(t, 1, FreeSlots(out, cfgLifecycle(2)))
			}},
		{name: "migrate 4 to 5", state: func() *State { return stateAt(4) }, cfg: cfgHealth(1), id: a, want: OutcomeAdmitted,
			check: func(t *testing.T, _, out *State, d AcquireDecision) {
				assert.Equal(t, 5, d.MigratedTo)
				assert.Equal(t, 5, out.SchemaVersion)
			}},
		{name: "migrate 4 to 5 needs no reservations", state: func() *State {
			s := stateAt(4)
			s.Reservations = []Reservation{quarantineOn("q", "r8")}
			return s
		}, cfg: cfgHealth(2), id: a, want: OutcomeQueued,
			check: func(t *testing.T, _, out *State, d AcquireDecision) {
				require.NotNil(t, d.Upgrade)
				assert.Len(t, d.Upgrade.Quarantines(), 1)
				assert.Equal(t, 4, out.SchemaVersion)
				assert.Contains(t, d.Upgrade.Summary(), "quarantines: 1")
			}},
		{name: "migrate 4 to 5 ignores expired cooldowns", state: func() *State {
			s := stateAt(4)
			s.Reservations = []Reservation{cooldownOn("cd", "r8", now)}
			return s
		}, cfg: cfgHealth(1), id: a, want: OutcomeAdmitted},
		{name: "migrate 3 to 5 in one write on an empty lock", state: func() *State { return stateAt(3) }, cfg: cfgHealth(1), id: a, want: OutcomeAdmitted,
			check: func(t *testing.T, _, out *State, d AcquireDecision) {
				assert.Equal(t, 5, d.MigratedTo)
				assert.Equal(t, 5, out.SchemaVersion)
				assert.Nil(t, out.ActiveIncident)
			}},
		{name: "config never downgrades", state: func() *State { return stateAt(4) }, cfg: DefaultConfig(), id: a, want: OutcomeAdmitted,
			check: func(t *testing.T, _, out *State, d AcquireDecision) {
				assert.Equal(t, 4, out.SchemaVersion)
				assert.Zero(t, d.MigratedTo)
				assert.Equal(t, "r1", out.Holders[0].RunnerID)
			}},
		{name: "incident blocks without enqueueing", state: func() *State {
			s := stateAt(5)
			s.ActiveIncident = incident
			return s
		}, cfg: cfgHealth(1), id: a, want: OutcomeAccountBlocked, check: func(t *testing.T, in, out *State, d AcquireDecision) {
			assert.False(t, d.Changed)
			assert.Equal(t, in, out)
			assert.Zero(t, d.Position)
			assert.Equal(t, incident, d.Incident)
		}},
		{name: "incident reports own queue position", state: func() *State {
			s := stateAt(5)
			s.ActiveIncident = incident
			s.Queue = []Entry{entryFor(b, 5), entryFor(a, 5)}
			return s
		}, cfg: DefaultConfig(), id: a, want: OutcomeAccountBlocked, check: func(t *testing.T, in, out *State, d AcquireDecision) {
			assert.Equal(t, 2, d.Position)
			assert.Equal(t, in, out, "the queue entry is removed by Cleanup, not here")
		}},
		{name: "expired cooldown frees the slot", state: func() *State {
			s := stateAt(4)
			s.Reservations = []Reservation{cooldownOn("cd", "r8", now)}
			return s
		}, cfg: cfgLifecycle(1), id: a, want: OutcomeAdmitted, check: func(t *testing.T, _, out *State, _ AcquireDecision) {
			assert.Empty(t, out.Reservations)
		}},
		{name: "live cooldown holds the slot", state: func() *State {
			s := stateAt(4)
			s.Reservations = []Reservation{cooldownOn("cd", "r8", now.Add(time.Millisecond))}
			return s
		}, cfg: cfgLifecycle(1), id: a, want: OutcomeQueued},
		{name: "cooldown blocks its runner", state: func() *State {
			s := stateAt(4)
			s.Reservations = []Reservation{cooldownOn("cd", "r1", now.Add(time.Hour))}
			return s
		}, cfg: cfgLifecycle(2), id: a, want: OutcomeQueued},
		{name: "same runner quarantine reclaim", state: func() *State {
			s := stateAt(4)
			s.Reservations = []Reservation{quarantineOn("q1", "r1")}
			s.Queue = []Entry{entryFor(b, 4)}
			return s
		}, cfg: cfgLifecycle(1), id: a, want: OutcomeAdmitted, check: func(t *testing.T, _, out *State, d AcquireDecision) {
			assert.True(t, d.QuarantineRecovered)
			require.NotNil(t, d.ConsumedQuarantine)
			assert.Equal(t, "q1", d.ConsumedQuarantine.ReservationID)
			assert.Empty(t, out.Reservations)
			assert.Equal(t, []Entry{entryFor(b, 4)}, out.Queue)
		}},
		{name: "reclaim only for the first entry on the runner", state: func() *State {
			s := stateAt(4)
			s.Reservations = []Reservation{quarantineOn("q1", "r1")}
			s.Queue = []Entry{entryFor(c, 4)}
			return s
		}, cfg: cfgLifecycle(1), id: a, want: OutcomeQueued},
		{name: "reclaim refused when over capacity", state: func() *State {
			s := stateAt(4)
			s.Holders = []Holder{holderFor(b, 4)}
			s.Reservations = []Reservation{quarantineOn("q1", "r1")}
			return s
		}, cfg: cfgLifecycle(1), id: a, want: OutcomeQueued},
		{name: "other runner cannot reclaim", state: func() *State {
			s := stateAt(4)
			s.Reservations = []Reservation{quarantineOn("q1", "r1")}
			return s
		}, cfg: cfgLifecycle(1), id: b, want: OutcomeQueued},
		{name: "invalid job id", state: func() *State { return stateAt(2) }, cfg: DefaultConfig(), id: withJob(a, "x"), code: CodeInvalidIdentity},
		{name: "empty holder id", state: func() *State { return stateAt(2) }, cfg: DefaultConfig(), id: Identity{}, code: CodeInvalidIdentity},
		{name: "invalid config", state: func() *State { return stateAt(2) }, cfg: Config{}, id: a, code: CodeInvalidConfig},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			in := c.state()
			before := in.Clone()
			out, d, err := Acquire(in, c.cfg, AcquireRequest{Identity: c.id, Lease: lease}, now)
			require.Equal(t, before, in, "input mutated")
			if c.code != "" {
				requireCode(t, err, c.code)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.want, d.Outcome)
			if !d.Changed {
				assert.Equal(t, in, out)
			}
			mustEncodeDecode(t, out)
			if c.check != nil {
				c.check(t, in, out, d)
			}
		})
	}
}

func TestAcquireInvalidLeaseAndNilState(t *testing.T) {
	t.Parallel()
	_, _, err := Acquire(stateAt(2), DefaultConfig(), AcquireRequest{Identity: ident(1, "")}, t0)
	requireCode(t, err, CodeInvalidLease)
	_, _, err = Acquire(nil, DefaultConfig(), AcquireRequest{Identity: ident(1, ""), Lease: lease}, t0)
	requireCode(t, err, CodeInvalidState)
}

func TestAcquireQueueThenPollIsStable(t *testing.T) {
	t.Parallel()
	for schema := 2; schema <= MaxSchemaVersion; schema++ {
		s := stateAt(schema)
		s.Holders = []Holder{holderFor(ident(9, "r9"), schema)}
		if schema >= FencedSchemaVersion {
			s.FencingToken, s.Holders[0].FencingToken = 1, 1
		}
		cfg := DefaultConfig()
		s1, d1, err := Acquire(s, cfg, AcquireRequest{Identity: ident(1, "r1"), Lease: lease}, t0)
		require.NoError(t, err)
		require.True(t, d1.Changed)
		s2, d2, err := Acquire(s1, cfg, AcquireRequest{Identity: ident(1, "r1"), Lease: lease}, t0.Add(time.Minute))
		require.NoError(t, err)
		assert.False(t, d2.Changed, "schema %d", schema)
		assert.Equal(t, s1, s2)
	}
}
