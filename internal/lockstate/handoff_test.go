package lockstate

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func queueOf(s *State) []string {
	var out []string
	for _, e := range s.Queue {
		out = append(out, e.HolderID)
	}
	return out
}

func TestHandoff(t *testing.T) {
	t.Parallel()
	a, b, c, d := ident(1, "r1"), ident(2, "r2"), ident(3, "r1"), ident(4, "r3")
	now := t0.Add(time.Minute)
	incident, err := IncidentFor(ident(50, "r9"), t0, "")
	require.NoError(t, err)
	type tc struct {
		name  string
		state func() *State
		cfg   Config
		want  []string // admitted, in order
		check func(t *testing.T, in, out *State, d HandoffDecision)
	}
	cases := []tc{
		{name: "free seat admits the head", state: func() *State {
			s := stateAt(3)
			s.Holders = []Holder{holderFor(d, 3)}
			s.Queue = []Entry{entryFor(a, 3), entryFor(b, 3)}
			return s
		}, cfg: Config{MaxHolders: 2, RunnerSerialization: true}, want: []string{a.HolderID},
			check: func(t *testing.T, _, out *State, _ HandoffDecision) {
				h := out.Holders[HolderIndex(out, a.HolderID)]
				assert.Equal(t, FormatTime(now), h.AcquiredAt)
				assert.Equal(t, FormatTime(now.Add(HandoffLease)), h.ExpiresAt)
				assert.Equal(t, FormatTime(t0), h.QueuedAt, "the queue entry's queuedAt")
				assert.Equal(t, []string{b.HolderID}, queueOf(out))
				assert.Equal(t, FormatTime(now), out.UpdatedAt)
			}},
		{name: "two free seats admit two", state: func() *State {
			s := stateAt(3)
			s.Queue = []Entry{entryFor(a, 3), entryFor(b, 3), entryFor(d, 3)}
			return s
		}, cfg: Config{MaxHolders: 2, RunnerSerialization: true}, want: []string{a.HolderID, b.HolderID}},
		{name: "runner serialization skips a waiter whose runner is taken", state: func() *State {
			s := stateAt(3)
			s.Queue = []Entry{entryFor(a, 3), entryFor(c, 3), entryFor(b, 3)}
			return s
		}, cfg: Config{MaxHolders: 2, RunnerSerialization: true}, want: []string{a.HolderID, b.HolderID},
			check: func(t *testing.T, _, out *State, _ HandoffDecision) {
				assert.Equal(t, []string{c.HolderID}, queueOf(out), "c waits for its runner r1")
			}},
		{name: "no free seat admits nobody", state: func() *State {
			s := stateAt(3)
			s.Holders = []Holder{holderFor(d, 3)}
			s.Queue = []Entry{entryFor(a, 3)}
			return s
		}, cfg: Config{MaxHolders: 1, RunnerSerialization: true}},
		{name: "a cooldown occupies its seat", state: func() *State {
			s := stateAt(4)
			s.Reservations = []Reservation{cooldownOn("cd", "r7", now.Add(time.Minute))}
			s.Queue = []Entry{entryFor(a, 4)}
			return s
		}, cfg: Config{MaxHolders: 1, RunnerSerialization: true, ResourceLifecycle: true}},
		{name: "an expired cooldown is pruned and its seat handed off", state: func() *State {
			s := stateAt(4)
			s.Reservations = []Reservation{cooldownOn("cd", "r7", now.Add(-time.Second))}
			s.Queue = []Entry{entryFor(a, 4)}
			return s
		}, cfg: Config{MaxHolders: 1, RunnerSerialization: true, ResourceLifecycle: true}, want: []string{a.HolderID},
			check: func(t *testing.T, _, out *State, _ HandoffDecision) { assert.Empty(t, out.Reservations) }},
		{name: "never during an active incident", state: func() *State {
			s := stateAt(5)
			s.ActiveIncident = incident
			s.Queue = []Entry{entryFor(a, 5)}
			return s
		}, cfg: cfgHealth(2)},
		{name: "a quarantine reclaimer is left to reclaim itself", state: func() *State {
			s := stateAt(4)
			s.Reservations = []Reservation{quarantineOn("q", "r1")}
			s.Queue = []Entry{entryFor(a, 4), entryFor(b, 4)}
			return s
		}, cfg: Config{MaxHolders: 2, RunnerSerialization: true, ResourceLifecycle: true}, want: []string{b.HolderID},
			check: func(t *testing.T, _, out *State, _ HandoffDecision) {
				assert.Equal(t, []string{a.HolderID}, queueOf(out))
			}},
		{name: "schema 6 issues tokens and counts overtakes", state: func() *State {
			s := stateAt(6)
			s.FencingToken = 7
			s.Holders = []Holder{holderTok(ident(9, "r1"), 6, 7)}
			s.Queue = []Entry{entryFor(a, 6), entryFor(b, 6), entryFor(d, 6)}
			return s
		}, cfg: Config{MaxHolders: 3, RunnerSerialization: true, ResourceLifecycle: true, AccountHealth: true, FencedAdmission: true, MaxOvertakes: 2},
			want: []string{b.HolderID, d.HolderID},
			check: func(t *testing.T, _, out *State, dec HandoffDecision) {
				assert.Equal(t, []int64{8, 9}, dec.FencingTokens)
				assert.Equal(t, int64(9), out.FencingToken)
				assert.Equal(t, int64(8), FencingToken(out, b.HolderID))
				require.Len(t, out.Queue, 1)
				assert.Equal(t, 2, out.Queue[0].Overtakes, "a (blocked on r1) is passed twice")
				assert.Equal(t, 0, out.Holders[HolderIndex(out, b.HolderID)].Overtakes)
			}},
		{name: "schema 6 stops at the overtaking barrier", state: func() *State {
			s := stateAt(6)
			s.FencingToken = 7
			s.Holders = []Holder{holderTok(ident(9, "r1"), 6, 7)}
			a6 := entryFor(a, 6)
			a6.Overtakes = 1
			s.Queue = []Entry{a6, entryFor(b, 6), entryFor(d, 6)}
			return s
		}, cfg: Config{MaxHolders: 3, RunnerSerialization: true, ResourceLifecycle: true, AccountHealth: true, FencedAdmission: true, MaxOvertakes: 2},
			want: []string{b.HolderID},
			check: func(t *testing.T, _, out *State, _ HandoffDecision) {
				assert.Equal(t, 2, out.Queue[0].Overtakes)
				assert.Equal(t, []string{a.HolderID, d.HolderID}, queueOf(out), "a reached maxOvertakes: d waits behind it")
			}},
		{name: "not while the config asks for a migration", state: func() *State {
			s := stateAt(2)
			s.Queue = []Entry{entryFor(a, 2)}
			return s
		}, cfg: Config{MaxHolders: 2, RunnerSerialization: true}},
		{name: "schema 2 admits in queue order", state: func() *State {
			s := stateAt(2)
			s.Queue = []Entry{entryFor(a, 2), entryFor(c, 2)}
			return s
		}, cfg: Config{MaxHolders: 2}, want: []string{a.HolderID, c.HolderID}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := tc.state()
			require.NoError(t, validateState(in, ""))
			before := in.Clone()
			out, dec, err := Handoff(in, tc.cfg, now)
			require.NoError(t, err)
			require.Equal(t, before, in, "Handoff mutated its input")
			assert.Equal(t, tc.want, dec.Admitted)
			assert.Equal(t, len(tc.want) > 0, dec.Changed)
			if !dec.Changed {
				require.Equal(t, in, out)
			}
			mustEncodeDecode(t, out)
			assert.LessOrEqual(t, len(out.Holders)+len(out.Reservations), tc.cfg.MaxHolders)
			if tc.check != nil {
				tc.check(t, in, out, dec)
			}
		})
	}
}

func TestHandoffAllowed(t *testing.T) {
	t.Parallel()
	for schema := 2; schema <= 6; schema++ {
		assert.Equal(t, schema <= HandoffMaxSchema, HandoffAllowed(stateAt(schema)), "schema %d", schema)
	}
	assert.False(t, HandoffAllowed(nil))
}

func TestAcquireInsertsByArrival(t *testing.T) {
	t.Parallel()
	a, b, c, d, late := ident(1, "r1"), ident(2, "r2"), ident(3, "r3"), ident(4, "r4"), ident(5, "r5")
	// late arrived (started its acquire) before b, c and d did.
	b.QueuedAt, c.QueuedAt, d.QueuedAt = t0.Add(time.Second), t0.Add(2*time.Second), t0.Add(3*time.Second)
	early := ident(6, "r6")
	early.QueuedAt = t0.Add(-time.Second)
	now := t0.Add(time.Minute)
	cfg := Config{MaxHolders: 1, RunnerSerialization: true}
	full := func(q ...Identity) *State {
		s := stateAt(3)
		s.Holders = []Holder{holderFor(ident(9, "r9"), 3)}
		for _, id := range q {
			s.Queue = append(s.Queue, id.entry(3, t0))
		}
		return s
	}
	// late arrived when a was queued; b, c, d joined after it arrived.
	arrival := NewArrival(full(a))
	out, dec, err := Acquire(full(a, b, c, d), cfg, AcquireRequest{Identity: late, Lease: lease, Arrival: arrival}, now)
	require.NoError(t, err)
	assert.Equal(t, OutcomeQueued, dec.Outcome)
	assert.Equal(t, 2, dec.Position)
	assert.Equal(t, []string{a.HolderID, late.HolderID, b.HolderID, c.HolderID, d.HolderID}, queueOf(out))
	// Among the entries that joined after it arrived, one that arrived
	// earlier (by its queuedAt) stays ahead.
	out, _, err = Acquire(full(a, early, b), cfg, AcquireRequest{Identity: late, Lease: lease, Arrival: arrival}, now)
	require.NoError(t, err)
	assert.Equal(t, []string{a.HolderID, early.HolderID, late.HolderID, b.HolderID}, queueOf(out))
	// Without an arrival snapshot it appends (the reference behaviour).
	out, _, err = Acquire(full(a, b), cfg, AcquireRequest{Identity: late, Lease: lease}, now)
	require.NoError(t, err)
	assert.Equal(t, []string{a.HolderID, b.HolderID, late.HolderID}, queueOf(out))
	// Everyone it arrived behind has left: it joins at the head.
	out, _, err = Acquire(full(b, c), cfg, AcquireRequest{Identity: late, Lease: lease, Arrival: arrival}, now)
	require.NoError(t, err)
	assert.Equal(t, []string{late.HolderID, b.HolderID, c.HolderID}, queueOf(out))
	// Inserted ahead of later arrivals with a seat free: it joins in this
	// write and is admitted by its next one (each admission is read from a
	// committed queue position).
	free := full(b)
	free.Holders = nil
	out, dec, err = Acquire(free, Config{MaxHolders: 2, RunnerSerialization: true}, AcquireRequest{Identity: late, Lease: lease, Arrival: NewArrival(nil)}, now)
	require.NoError(t, err)
	assert.Equal(t, OutcomeQueued, dec.Outcome)
	assert.Equal(t, []string{late.HolderID, b.HolderID}, queueOf(out))
	out, dec, err = Acquire(out, Config{MaxHolders: 2, RunnerSerialization: true}, AcquireRequest{Identity: late, Lease: lease, Arrival: NewArrival(nil)}, now)
	require.NoError(t, err)
	assert.Equal(t, OutcomeAdmitted, dec.Outcome)
	assert.GreaterOrEqual(t, HolderIndex(out, late.HolderID), 0, "the next poll admits it")
	// At the end it is admitted in the joining write, as before.
	out, dec, err = Acquire(stateAt(3), cfg, AcquireRequest{Identity: late, Lease: lease, Arrival: NewArrival(nil)}, now)
	require.NoError(t, err)
	assert.Equal(t, OutcomeAdmitted, dec.Outcome)
	assert.Len(t, out.Holders, 1)
}

func TestAcquireRefusesAFullQueue(t *testing.T) {
	t.Parallel()
	s := stateAt(3)
	s.Holders = []Holder{holderFor(ident(100000, "r0"), 3)}
	for i := range MaxQueueEntries {
		s.Queue = append(s.Queue, entryFor(ident(i+1, "r1"), 3))
	}
	_, _, err := Acquire(s, Config{MaxHolders: 1}, AcquireRequest{Identity: ident(MaxQueueEntries+1, "r2"), Lease: lease}, t0)
	requireCode(t, err, CodeQueueFull)
	assert.Contains(t, err.Error(), "shard the lock")
	// A job already queued keeps polling normally.
	_, dec, err := Acquire(s, Config{MaxHolders: 1}, AcquireRequest{Identity: ident(5, "r1"), Lease: lease}, t0)
	require.NoError(t, err)
	assert.Equal(t, OutcomeQueued, dec.Outcome)
}

// A job handed a seat by a release that read an older config (no
// serialization yet) is told it holds the seat when its own config asks for
// an upgrade the busy lock cannot take yet, instead of being refused.
func TestAcquireTellsAHandedOffHolderDespiteAPendingMigration(t *testing.T) {
	t.Parallel()
	a, b := ident(1, "r1"), ident(2, "r2")
	s := stateAt(2)
	s.Holders = []Holder{holderFor(a, 2)}
	s.Queue = []Entry{entryFor(b, 2)}
	cfg := Config{MaxHolders: 2, RunnerSerialization: true}
	out, dec, err := Acquire(s, cfg, AcquireRequest{Identity: a, Lease: lease}, t0)
	require.NoError(t, err)
	assert.Equal(t, OutcomeAlreadyHolder, dec.Outcome)
	assert.Equal(t, 2, out.SchemaVersion, "no migration")
	// A waiter keeps waiting (admission paused, a seat free) and records
	// the runner id it takes across the upgrade.
	out, dec, err = Acquire(s, cfg, AcquireRequest{Identity: b, Lease: lease}, t0)
	require.NoError(t, err)
	assert.Equal(t, OutcomeQueued, dec.Outcome)
	require.NotNil(t, dec.Upgrade)
	assert.Equal(t, []string{a.HolderID}, dec.Upgrade.Holders)
	assert.Equal(t, "r2", out.Queue[0].PendingRunnerID)
	assert.Equal(t, 2, out.SchemaVersion)
}
