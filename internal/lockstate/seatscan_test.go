package lockstate

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// seatStep is step with labels and a priority class.
func seatStep(t *testing.T, s *State, cfg Config, id Identity, labels []string, prio int, now time.Time) (*State, AcquireDecision) {
	t.Helper()
	before := s.Clone()
	out, d, err := Acquire(s, cfg, AcquireRequest{Identity: id, Lease: lease, Labels: labels, Priority: prio}, now)
	require.NoError(t, err)
	require.Equal(t, before, s, "input mutated")
	if !d.Changed {
		require.Equal(t, s, out)
	}
	mustEncodeDecode(t, out)
	return out, d
}

// proPlus is the example: two pro seats and one plus seat, with
// priorities up to 9.
func proPlus(k int) Config {
	c := cfgSeats(k, SeatConfig{"pro-a-1", []string{"pro"}}, SeatConfig{"pro-a-2", []string{"pro"}}, SeatConfig{"plus-1", []string{"plus"}})
	c.Priority = PriorityConfig{Max: 9}
	return c
}

// seated is a schema-6 holder of id on seat with labels.
func seated(id Identity, seat, labels string, token int64) Holder {
	h := holderTok(id, 6, token)
	h.Seat, h.Labels = seat, labels
	return h
}

// waiting is a schema-6 queue entry of id.
func waiting(id Identity, labels string, prio, overtakes int) Entry {
	e := entryFor(id, 6)
	e.Labels, e.Priority, e.Overtakes = labels, prio, overtakes
	return e
}

func fencedState(holders []Holder, queue []Entry, res ...Reservation) *State {
	s := stateAt(6)
	s.Holders, s.Queue = holders, queue
	s.Reservations = append([]Reservation{}, res...)
	for _, h := range holders {
		s.FencingToken = max(s.FencingToken, h.FencingToken)
	}
	s.canonicalize()
	return s
}

func TestSeatAdmission(t *testing.T) {
	t.Parallel()
	a, b, c, d := ident(1, "r1"), ident(2, "r2"), ident(3, "r3"), ident(4, "r4")
	now := t0.Add(time.Minute)
	cases := []struct {
		name   string
		state  *State
		cfg    Config
		caller Identity
		labels []string
		prio   int
		want   AcquireOutcome
		seat   string
		check  func(t *testing.T, out *State, d AcquireDecision)
	}{
		{name: "first pro job takes the first pro seat", state: stateAt(6), cfg: proPlus(2), caller: a, labels: []string{"pro"}, want: OutcomeAdmitted, seat: "pro-a-1",
			check: func(t *testing.T, out *State, _ AcquireDecision) {
				assert.Equal(t, "pro", out.Holders[0].Labels)
				assert.Equal(t, []SeatUse{{Name: "pro-a-1", LastRunner: "r1", LastUsedAt: FormatTime(now)}}, out.Seats)
			}},
		{name: "no labels takes any seat", state: stateAt(6), cfg: proPlus(2), caller: a, want: OutcomeAdmitted, seat: "pro-a-1"},
		{name: "plus job takes the plus seat", state: stateAt(6), cfg: proPlus(2), caller: a, labels: []string{"plus"}, want: OutcomeAdmitted, seat: "plus-1"},
		{name: "plus never blocks behind pro when only plus is free (disjoint domains)",
			state: fencedState([]Holder{seated(b, "pro-a-1", "pro", 1), seated(c, "pro-a-2", "pro", 2)}, []Entry{waiting(d, "pro", 0, 0)}),
			cfg:   proPlus(2), caller: a, labels: []string{"plus"}, want: OutcomeAdmitted, seat: "plus-1",
			check: func(t *testing.T, out *State, _ AcquireDecision) {
				assert.Equal(t, 0, out.Queue[0].Overtakes, "the pro waiter could not use the plus seat: not overtaken")
			}},
		{name: "a barrier only holds the seats it could use",
			state: fencedState([]Holder{seated(b, "pro-a-1", "pro", 1), seated(c, "pro-a-2", "pro", 2)}, []Entry{waiting(d, "pro", 0, 2)}),
			cfg:   proPlus(2), caller: a, labels: []string{"plus"}, want: OutcomeAdmitted, seat: "plus-1"},
		{name: "higher class first", state: fencedState([]Holder{seated(b, "pro-a-1", "pro", 1), seated(c, "plus-1", "plus", 2)}, []Entry{waiting(d, "pro", 0, 0)}),
			cfg: proPlus(2), caller: a, labels: []string{"pro"}, prio: 5, want: OutcomeAdmitted, seat: "pro-a-2",
			check: func(t *testing.T, out *State, _ AcquireDecision) {
				assert.Equal(t, 1, out.Queue[0].Overtakes, "the earlier class-0 pro waiter was passed")
				assert.Equal(t, 5, out.Holders[2].Priority)
			}},
		{name: "lower class waits for the higher one", state: fencedState([]Holder{seated(b, "pro-a-1", "pro", 1), seated(c, "plus-1", "plus", 2)}, []Entry{waiting(d, "pro", 5, 0)}),
			cfg: proPlus(2), caller: a, labels: []string{"pro"}, want: OutcomeQueued,
			check: func(t *testing.T, out *State, dec AcquireDecision) { assert.Equal(t, 1, dec.Rank) }},
		{name: "overtaking bound holds whatever the class", state: fencedState([]Holder{seated(b, "pro-a-1", "pro", 1), seated(c, "plus-1", "plus", 2)}, []Entry{waiting(d, "pro", 0, 2)}),
			cfg: proPlus(2), caller: a, labels: []string{"pro"}, prio: 9, want: OutcomeQueued,
			check: func(t *testing.T, _ *State, dec AcquireDecision) { assert.Equal(t, -1, dec.Rank) }},
		{name: "the barrier itself is admitted", state: fencedState([]Holder{seated(b, "pro-a-1", "pro", 1), seated(c, "plus-1", "plus", 2)}, []Entry{waiting(d, "pro", 0, 2), waiting(a, "pro", 9, 0)}),
			cfg: proPlus(2), caller: d, labels: []string{"pro"}, want: OutcomeAdmitted, seat: "pro-a-2"},
		{name: "affinity: the seat this runner used last", state: func() *State {
			s := stateAt(6)
			s.Seats = []SeatUse{{"pro-a-1", "r2", FormatTime(t0)}, {"pro-a-2", "r1", FormatTime(t0.Add(time.Second))}}
			return s
		}(), cfg: proPlus(2), caller: a, labels: []string{"pro"}, want: OutcomeAdmitted, seat: "pro-a-2"},
		{name: "affinity: else the least recently used", state: func() *State {
			s := stateAt(6)
			s.Seats = []SeatUse{{"pro-a-1", "r2", FormatTime(t0.Add(time.Second))}, {"pro-a-2", "r3", FormatTime(t0)}}
			return s
		}(), cfg: proPlus(2), caller: a, labels: []string{"pro"}, want: OutcomeAdmitted, seat: "pro-a-2"},
		{name: "affinity follows the runner name when recorded", state: func() *State {
			s := stateAt(6)
			s.Seats = []SeatUse{{"pro-a-1", "r2", FormatTime(t0)}, {"pro-a-2", "machine-7", FormatTime(t0.Add(time.Second))}}
			return s
		}(), cfg: proPlus(2), caller: func() Identity { x := a; x.RunnerName = "machine-7"; return x }(), labels: []string{"pro"}, want: OutcomeAdmitted, seat: "pro-a-2"},
		{name: "a quarantined seat is out of service, the others are not", state: func() *State {
			q := quarantineOn("q1", "r9")
			q.Seat = "pro-a-1"
			return fencedState(nil, nil, q)
		}(), cfg: proPlus(2), caller: a, labels: []string{"pro"}, want: OutcomeAdmitted, seat: "pro-a-2"},
		{name: "a cooling seat is out of service", state: func() *State {
			r := cooldownOn("c1", "r9", now.Add(time.Hour))
			r.Seat = "plus-1"
			return fencedState(nil, nil, r)
		}(), cfg: proPlus(2), caller: a, labels: []string{"plus"}, want: OutcomeQueued},
		{name: "an expired cooldown frees its seat", state: func() *State {
			r := cooldownOn("c1", "r9", now)
			r.Seat = "plus-1"
			return fencedState(nil, nil, r)
		}(), cfg: proPlus(2), caller: a, labels: []string{"plus"}, want: OutcomeAdmitted, seat: "plus-1"},
		{name: "same-runner reclaim keeps the quarantined seat", state: func() *State {
			q := quarantineOn("q1", "r1")
			q.Seat = "plus-1"
			return fencedState([]Holder{seated(b, "pro-a-1", "pro", 1), seated(c, "pro-a-2", "pro", 2)}, nil, q)
		}(), cfg: proPlus(2), caller: a, labels: []string{"plus"}, want: OutcomeAdmitted, seat: "plus-1",
			check: func(t *testing.T, out *State, dec AcquireDecision) {
				assert.True(t, dec.QuarantineRecovered)
				assert.Empty(t, out.Reservations)
			}},
		{name: "a removed seat drains: never evicted, never reassigned", state: fencedState([]Holder{seated(b, "gone", "pro", 1)}, nil),
			cfg: cfgSeats(2, SeatConfig{"pro-a-1", []string{"pro"}}), caller: a, labels: []string{"pro"}, want: OutcomeAdmitted, seat: "pro-a-1",
			check: func(t *testing.T, out *State, _ AcquireDecision) {
				assert.Equal(t, "gone", out.Holders[0].Seat)
				assert.Equal(t, []string{"pro-a-1"}, []string{out.Seats[0].Name})
			}},
		{name: "a holder without a seat (admitted before seats were named) takes one", state: fencedState([]Holder{holderTok(b, 6, 1)}, nil),
			cfg: cfgSeats(2, SeatConfig{"pro-a-1", []string{"pro"}}, SeatConfig{"pro-a-2", []string{"pro"}}), caller: c, labels: []string{"pro"}, want: OutcomeAdmitted, seat: "pro-a-1"},
		{name: "...and only one", state: fencedState([]Holder{holderTok(b, 6, 1), seated(c, "pro-a-1", "pro", 2)}, nil),
			cfg: cfgSeats(2, SeatConfig{"pro-a-1", []string{"pro"}}, SeatConfig{"pro-a-2", []string{"pro"}}), caller: a, labels: []string{"pro"}, want: OutcomeQueued},
		{name: "anonymous seats with priority classes", state: fencedState([]Holder{holderTok(b, 6, 1)}, []Entry{waiting(c, "", 0, 0)}),
			cfg: func() Config { x := cfgFenced(2, 2); x.Priority = PriorityConfig{Max: 3}; return x }(), caller: a, prio: 3, want: OutcomeAdmitted, seat: "",
			check: func(t *testing.T, out *State, _ AcquireDecision) { assert.Equal(t, 1, out.Queue[0].Overtakes) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out, dec := seatStep(t, tc.state, tc.cfg, tc.caller, tc.labels, tc.prio, now)
			require.Equal(t, tc.want, dec.Outcome)
			if tc.want == OutcomeAdmitted {
				assert.Equal(t, tc.seat, dec.Seat)
				assert.Equal(t, tc.seat, out.Holders[HolderIndex(out, tc.caller.HolderID)].Seat)
			}
			if tc.check != nil {
				tc.check(t, out, dec)
			}
		})
	}
}

func TestSeatRequestRefusedBeforeJoining(t *testing.T) {
	t.Parallel()
	s := stateAt(6)
	_, _, err := Acquire(s, proPlus(2), AcquireRequest{Identity: ident(1, "r1"), Lease: lease, Labels: []string{"ultra"}}, t0)
	requireCode(t, err, CodeNoMatchingSeat)
	assert.Contains(t, err.Error(), "plus, pro")
	_, _, err = Acquire(s, cfgFenced(1, 2), AcquireRequest{Identity: ident(1, "r1"), Lease: lease, Priority: 1}, t0)
	requireCode(t, err, CodePriorityNotAllowed)
	_, _, err = Acquire(s, proPlus(2), AcquireRequest{Identity: ident(1, "r1"), Lease: lease, Priority: 10}, t0)
	requireCode(t, err, CodeInvalidSeatRequest)
	_, _, err = Acquire(s, proPlus(2), AcquireRequest{Identity: ident(1, "r1"), Lease: lease, Labels: []string{"Pro"}}, t0)
	requireCode(t, err, CodeInvalidSeatRequest)
}

// TestSeatReleaseKeepsSeat: the cooldown or quarantine a holder leaves
// behind keeps its seat out of service.
func TestSeatReleaseKeepsSeat(t *testing.T) {
	t.Parallel()
	cfg := proPlus(2)
	cfg.ReleaseCooldownSeconds = 60
	a := ident(1, "r1")
	s, d := seatStep(t, stateAt(6), cfg, a, []string{"plus"}, 0, t0)
	require.Equal(t, "plus-1", d.Seat)
	out, _, err := Cleanup(s, cfg, cleanupReq(a, confirmed), t0.Add(time.Minute))
	require.NoError(t, err)
	require.Len(t, out.Reservations, 1)
	assert.Equal(t, "plus-1", out.Reservations[0].Seat)
	mustEncodeDecode(t, out)
	_, d = seatStep(t, out, cfg, ident(2, "r2"), []string{"plus"}, 0, t0.Add(90*time.Second))
	assert.Equal(t, OutcomeQueued, d.Outcome)
	_, d = seatStep(t, out, cfg, ident(2, "r2"), []string{"plus"}, 0, t0.Add(2*time.Minute))
	assert.Equal(t, OutcomeAdmitted, d.Outcome)
}

// TestSeatEntryCarriesLabels: the queue entry records the label set and
// class; an entry from before (no labels) gains them on its next poll.
func TestSeatEntryCarriesLabels(t *testing.T) {
	t.Parallel()
	cfg := proPlus(2)
	full := fencedState([]Holder{seated(ident(7, "r7"), "pro-a-1", "pro", 1), seated(ident(8, "r8"), "pro-a-2", "pro", 2), seated(ident(9, "r9"), "plus-1", "plus", 3)}, nil)
	out, d := seatStep(t, full, cfg, ident(1, "r1"), []string{"pro", "pro"}, 4, t0)
	require.Equal(t, OutcomeQueued, d.Outcome)
	assert.Equal(t, "pro", out.Queue[0].Labels)
	assert.Equal(t, 4, out.Queue[0].Priority)
	out.Queue[0].Labels, out.Queue[0].Priority = "", 0
	again, d := seatStep(t, out, cfg, ident(1, "r1"), []string{"pro"}, 4, t0)
	assert.True(t, d.Changed)
	assert.Equal(t, 4, again.Queue[0].Priority)
}

// TestNoSeatsNoPriorityUnchanged: a schema-6 lock without seats and
// priorities admits by the old scan (seat mode off).
func TestNoSeatsNoPriorityUnchanged(t *testing.T) {
	t.Parallel()
	s := fencedState(nil, []Entry{waiting(ident(2, "r2"), "", 0, 0)})
	assert.False(t, seatMode(s, cfgFenced(2, 2)))
	s.Queue[0].Priority = 1
	assert.True(t, seatMode(s, cfgFenced(2, 2)))
	assert.True(t, seatMode(stateAt(6), proPlus(2)))
	assert.False(t, seatMode(stateAt(5), proPlus(2)))
}
