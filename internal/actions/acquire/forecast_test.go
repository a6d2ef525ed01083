package acquire

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

var forecastT0 = time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)

// holdersAt builds holders admitted at t0 + each offset.
func holdersAt(offsets ...time.Duration) []lockstate.Holder {
	var hs []lockstate.Holder
	for i, o := range offsets {
		hs = append(hs, lockstate.Holder{Entry: lockstate.Entry{HolderID: fmt.Sprintf("h%d", i)},
			AcquiredAt: lockstate.FormatTime(forecastT0.Add(o)), ExpiresAt: lockstate.FormatTime(forecastT0.Add(time.Hour))})
	}
	return hs
}

func TestForecastReleaseHandsSeatsInTurn(t *testing.T) {
	t.Parallel()
	const m = time.Minute
	now := forecastT0.Add(3 * m)
	hs := holdersAt(0, 2*m) // two seats, 10-minute holds: releases at 10 and 12
	cases := []struct {
		rank int
		want time.Duration
	}{
		{0, 10 * m}, // the first release
		{1, 12 * m}, // the second
		{2, 20 * m}, // rank 0's own hold ends first
		{3, 22 * m},
		{4, 30 * m},
	}
	for _, tc := range cases {
		at, ok := forecastRelease(hs, 10*m, tc.rank, now)
		require.True(t, ok, "rank %d", tc.rank)
		assert.Equal(t, forecastT0.Add(tc.want), at, "rank %d", tc.rank)
	}
	// A holder past its forecast still counts at its forecast time: the
	// forecast is then in the past (overdue), not pushed later.
	at, ok := forecastRelease(holdersAt(0), 2*m, 0, now)
	require.True(t, ok)
	assert.Equal(t, forecastT0.Add(2*m), at)
	for name, hs := range map[string][]lockstate.Holder{
		"no holders":                  nil,
		"an acquiredAt in the future": holdersAt(0, 5*m),
		"an unreadable acquiredAt":    {{Entry: lockstate.Entry{HolderID: "x"}, AcquiredAt: "yesterday"}},
	} {
		_, ok := forecastRelease(hs, 10*m, 0, now)
		assert.False(t, ok, name)
	}
}

func TestOldestHold(t *testing.T) {
	t.Parallel()
	const s = time.Second
	now := forecastT0.Add(time.Minute)
	assert.Equal(t, 45*s, oldestHold(stateWith(holdersAt(15*s, 50*s)), now), "the longest-held of the holders")
	assert.Zero(t, oldestHold(stateWith(nil), now), "no holder")
	assert.Zero(t, oldestHold(stateWith(holdersAt(0, 2*time.Minute)), now), "an acquiredAt in the future (a writer clock ahead)")
	bad := append(holdersAt(0), lockstate.Holder{Entry: lockstate.Entry{HolderID: "x"}, AcquiredAt: "yesterday"})
	assert.Zero(t, oldestHold(stateWith(bad), now), "an unreadable acquiredAt")
}

// read builds a state of the holders at offsets, read at now.
func stateWith(hs []lockstate.Holder) *lockstate.State {
	st := lockstate.Empty("seats")
	st.Holders = hs
	return st
}

func TestHoldLogLearnsHoldsFromHandoffsAndCloseReads(t *testing.T) {
	t.Parallel()
	const s = time.Second
	var h holdLog
	_, _, ok := h.estimate()
	assert.False(t, ok, "nothing observed")

	a := lockstate.Holder{Entry: lockstate.Entry{HolderID: "a"}, AcquiredAt: lockstate.FormatTime(forecastT0)}
	b := lockstate.Holder{Entry: lockstate.Entry{HolderID: "b"}, AcquiredAt: lockstate.FormatTime(forecastT0.Add(100 * s))}
	c := lockstate.Holder{Entry: lockstate.Entry{HolderID: "c"}, AcquiredAt: lockstate.FormatTime(forecastT0.Add(600 * s))}
	h.observe(stateWith([]lockstate.Holder{a, b}), forecastT0.Add(590*s))
	// a left and c was handed its seat at 600 s: a held exactly 600 s,
	// whatever the time of the read that saw it.
	h.observe(stateWith([]lockstate.Holder{b, c}), forecastT0.Add(605*s))
	assert.Equal(t, []time.Duration{600 * s}, h.holds)
	_, _, ok = h.estimate()
	assert.False(t, ok, "one hold is not a forecast")

	// b left with no new holder (a seat freed at schema >= 4): its end is
	// only known to lie between the reads, so the earlier read's time is
	// taken (b held at least 605 - 100 = 505 s).
	h.observe(stateWith([]lockstate.Holder{c}), forecastT0.Add(620*s))
	assert.Equal(t, []time.Duration{600 * s, 505 * s}, h.holds)

	// c left, but the reads are too far apart to tell how long it held: not
	// recorded.
	h.observe(stateWith(nil), forecastT0.Add(1400*s))
	assert.Len(t, h.holds, 2)

	typical, earliest, ok := h.estimate()
	require.True(t, ok)
	assert.Equal(t, 600*s, typical, "the median of two is the larger")
	assert.Equal(t, 505*s-190*s, earliest, "the shortest less twice its distance to the median")

	// Alike holds still keep a quarter of a hold of margin, and only the
	// last forecastHolds count.
	h.holds = nil
	for range 2 * forecastHolds {
		h.holds = append(h.holds, 400*s)
		if len(h.holds) > forecastHolds {
			h.holds = h.holds[1:]
		}
	}
	typical, earliest, _ = h.estimate()
	assert.Equal(t, 400*s, typical)
	assert.Equal(t, 300*s, earliest)
}

func TestPollDelayAroundAForecastRelease(t *testing.T) {
	t.Parallel()
	const s = time.Second
	base := 15 * s
	fc := func(until, margin time.Duration) Schedule {
		return Schedule{Base: base, Rank: 0, Seats: 2, Queued: 1, Forecast: true, UntilRelease: until, ReleaseMargin: margin}
	}
	// The second rank (of two queued) polls at the fast interval; so does
	// the next waiter while a burst shows.
	second := func(sch Schedule) Schedule { sch.Rank, sch.Queued = 1, 2; return sch }
	burst := func(sch Schedule) Schedule { sch.Burst = true; return sch }
	cases := []struct {
		name string
		in   Schedule
		want time.Duration
	}{
		{"asleep far from the release, at most base", fc(10*time.Minute, 2*time.Minute), base},
		{"asleep until the earliest the release may come", fc(20*s, 10*s), 10 * s},
		{"fast between the earliest and the forecast", second(fc(8*s, 10*s)), 1500 * time.Millisecond},
		{"the next waiter's fast polls are a third slower than the next interval", fc(8*s, 10*s), s},
		{"but not in a burst", burst(fc(8*s, 10*s)), 1500 * time.Millisecond},
		{"no fast poll runs past the window", burst(fc(1600*time.Millisecond, 10*s)), 1100 * time.Millisecond},
		{"the window polls every half second", fc(500*time.Millisecond, 10*s), 500 * time.Millisecond},
		{"overdue, the window widens by a quarter of the time overdue", burst(fc(-2*s, 10*s)), 1 * s},
		{"back to the fast interval", second(fc(-time.Minute, 10*s)), 1500 * time.Millisecond},
		{"the next waiter's, when it is next", fc(-time.Minute, 10*s), s},
		{"a sooner cooldown still wins", Schedule{Base: base, Rank: 0, Seats: 2, Forecast: true, UntilRelease: time.Hour, UntilCooldown: 3 * s}, 3 * s},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assert.InDelta(t, float64(tc.want), float64(PollDelay(tc.in, 0)), float64(time.Millisecond))
		})
	}
	// The window interval is never below the rank's share of the fast budget.
	wide := Schedule{Base: base, Rank: 7, Seats: 4, Queued: 8, Forecast: true}
	assert.GreaterOrEqual(t, PollDelay(wide, 0), time.Duration(8*harmonic(8)*60*float64(s)/FastBudgetPerMinute))
	// Jitter never carries a sleeping waiter more than a third of the
	// window interval past its target.
	assert.LessOrEqual(t, PollDelay(fc(20*s, 10*s), 0.999), 10*s+windowJitterCeil(base))
}

// windowJitterCeil is the jitter bound of a forecast sleep at base.
func windowJitterCeil(base time.Duration) time.Duration {
	return max(time.Second/2, base/WindowDivisor) / 3
}

// TestReleaseForecastOnlyForLongAlikeHoldsAwayFromSecondaryLimits: the
// forecast is made for the fast ranks while every seat is held, from two
// holds of at least MinForecastHold × poll-seconds, and not within
// secondaryQuiet of a secondary-limit wait (a release it held back
// stretched the holds seen).
func TestReleaseForecastOnlyForLongAlikeHoldsAwayFromSecondaryLimits(t *testing.T) {
	t.Parallel()
	const m = time.Minute
	now := forecastT0.Add(3 * m)
	q := &acquirer{
		d:   Deps{Clock: clock.NewFake(now), PollUnit: time.Second},
		cfg: lockstate.Config{MaxHolders: 2},
		s:   Settings{Poll: 15 * time.Second},
	}
	st := stateWith(holdersAt(0, m))
	forecast := func(rank int) Schedule {
		sch := Schedule{Base: q.s.Poll, Rank: rank, Seats: 2}
		q.releaseForecast(st, &sch)
		return sch
	}
	q.holds.holds = []time.Duration{10 * m}
	assert.False(t, forecast(0).Forecast, "one hold")
	q.holds.holds = []time.Duration{10 * m, 11 * m}
	sch := forecast(0)
	require.True(t, sch.Forecast)
	assert.Equal(t, 8*m, sch.UntilRelease, "the median (11 min) from the oldest holder")
	assert.Equal(t, 11*m-(10*m-10*m/4), sch.ReleaseMargin, "from the shortest less a quarter of it (more than twice its distance to the median)")
	assert.True(t, forecast(3).Forecast, "every fast rank")
	assert.False(t, forecast(4).Forecast, "not the tail")
	assert.False(t, forecast(-1).Forecast, "not an unknown rank")

	q.holds.holds = []time.Duration{50 * time.Second, 50 * time.Second}
	assert.False(t, forecast(0).Forecast, "holds under a minute are polled through")

	q.holds.holds = []time.Duration{10 * m, 10 * m}
	q.secondaryWarned = now.Add(-5 * m)
	assert.False(t, forecast(0).Forecast, "a secondary-limit wait 5 minutes ago")
	q.secondaryWarned = now.Add(-11 * m)
	assert.True(t, forecast(0).Forecast)

	st = stateWith(holdersAt(0))
	assert.False(t, forecast(0).Forecast, "a free seat is taken, not forecast")
}

// TestFarWaiterPaceErrsShort replays bench `burst` seed 20261402: a far
// waiter joined at rank 16, read rank 13 nine minutes later and rank 12 five
// minutes after that (an arrival was inserted ahead while one admission
// passed). Paced by its last move alone it took holds for 9.5 minutes and
// slept 37 minutes through the seat a release handed it; paced over its
// whole wait with one move more than seen, the estimate is 5.5 minutes
// (true: 4–6) and it wakes in time.
func TestFarWaiterPaceErrsShort(t *testing.T) {
	t.Parallel()
	const m = time.Minute
	fc := clock.NewFake(forecastT0)
	q := &acquirer{
		d:   Deps{Clock: fc, PollUnit: time.Second},
		cfg: lockstate.Config{MaxHolders: 2},
		s:   Settings{Poll: 15 * time.Second},
	}
	q.id.HolderID = "me"
	queued := func(ahead int) *lockstate.State {
		st := stateWith(holdersAt(-m, -2*m))
		for i := range ahead {
			st.Queue = append(st.Queue, lockstate.Entry{HolderID: fmt.Sprintf("q%d", i), QueuedAt: lockstate.FormatTime(forecastT0)})
		}
		st.Queue = append(st.Queue, lockstate.Entry{HolderID: "me", QueuedAt: lockstate.FormatTime(forecastT0)})
		return st
	}
	q.observe(queued(16))
	fc.Advance(9 * m)
	q.observe(queued(13))
	fc.Advance(4*m + 46*time.Second)
	q.observe(queued(12))
	assert.Equal(t, 4, q.departed)
	assert.InDelta(t, float64(5*m+30*time.Second), float64(q.observedHold), float64(time.Second))
	d := PollDelay(Schedule{Base: q.s.Poll, Rank: 12, Seats: 2, Queued: 13, HoldEstimate: q.holdEstimate(queued(12))}, 0)
	assert.Less(t, d, 20*m, "it wakes before its turn (about 24 minutes away)")
}

// TestFarWaiterPaceFollowsAQueueThatSpeedsUp: one pace spans at most
// paceMoves moves, so after a slow start (a move every 10 minutes) the
// estimate follows the faster holds that came after it.
func TestFarWaiterPaceFollowsAQueueThatSpeedsUp(t *testing.T) {
	t.Parallel()
	const m = time.Minute
	fc := clock.NewFake(forecastT0)
	q := &acquirer{d: Deps{Clock: fc, PollUnit: time.Second}, cfg: lockstate.Config{MaxHolders: 2}, s: Settings{Poll: 15 * time.Second}}
	q.id.HolderID = "me"
	queued := func(ahead int) *lockstate.State {
		st := stateWith(holdersAt(-m, -2*m))
		for i := range ahead {
			st.Queue = append(st.Queue, lockstate.Entry{HolderID: fmt.Sprintf("q%d", i)})
		}
		st.Queue = append(st.Queue, lockstate.Entry{HolderID: "me"})
		return st
	}
	q.observe(queued(20))
	for ahead := 19; ahead >= 12; ahead-- {
		fc.Advance(10 * m)
		q.observe(queued(ahead))
	}
	assert.InDelta(t, float64(80*m*2/9), float64(q.observedHold), float64(time.Second), "8 slow moves")
	for ahead := 11; ahead >= 10; ahead-- {
		fc.Advance(2 * m)
		q.observe(queued(ahead))
	}
	assert.InDelta(t, float64(4*m*2/3), float64(q.observedHold), float64(time.Second), "the two fast moves since")
}

// TestFarWaiterPaceCountsDeparturesNotRankMoves replays bench `burst` seed
// 20261500: a waiter first queued at rank 10 reads again 90 s later, when
// four of those ten have been admitted but six earlier arrivals that joined
// late were inserted ahead of it (rank 12), and again 9 minutes 18 s after
// its first read, when two more have left (one of them a late joiner) and
// one more late arrival was inserted (rank 11). Its rank fell by one in
// all; six entries ahead of it left. The pace comes from the six
// departures (2 seats, one move more than seen: 7 turns in 9m18s), so it
// wakes before its turn instead of sleeping 26 minutes through it.
func TestFarWaiterPaceCountsDeparturesNotRankMoves(t *testing.T) {
	t.Parallel()
	const m = time.Minute
	fc := clock.NewFake(forecastT0)
	q := &acquirer{d: Deps{Clock: fc, PollUnit: time.Second}, cfg: lockstate.Config{MaxHolders: 2}, s: Settings{Poll: 15 * time.Second}}
	q.id.HolderID = "me"
	queued := queuedBehind
	q.observe(queued(ids("a", 0, 10)...))
	fc.Advance(90 * time.Second)
	st := queued(append(ids("late", 0, 6), ids("a", 4, 10)...)...)
	require.Equal(t, 12, admissibleRank(st, q.cfg, "me"), "the rank rose")
	q.observe(st)
	fc.Advance(9*m + 18*time.Second - 90*time.Second)
	st = queued(append(ids("late", 1, 7), ids("a", 5, 10)...)...)
	require.Equal(t, 11, admissibleRank(st, q.cfg, "me"))
	q.observe(st)
	assert.Equal(t, 6, q.departed, "a0-a4 and late0 left")
	assert.InDelta(t, float64((9*m+18*time.Second)*2/7), float64(q.observedHold), float64(time.Second))
	turn := time.Duration(11+1-FastRanks(2)) * q.observedHold / 2
	d := PollDelay(Schedule{Base: q.s.Poll, Rank: 11, Seats: 2, Queued: len(st.Queue), HoldEstimate: q.holdEstimate(st)}, 1)
	assert.Less(t, d, turn, "it wakes before it reaches the fast ranks")
}

// TestFarWaiterPaceRestartsAfterASecondaryLimit: while a secondary limit
// holds the App's writes back, no release lands, so departures counted
// across the wait read as slow holds (a rank-26 waiter of 30 s holds took
// them for 1m43s and slept 18 minutes through its turn in a 40-job,
// 2-seat burst). A measurement that began before the wait ended starts
// again after it; the pace measured before it stands.
func TestFarWaiterPaceRestartsAfterASecondaryLimit(t *testing.T) {
	t.Parallel()
	const m = time.Minute
	fc := clock.NewFake(forecastT0)
	q := &acquirer{d: Deps{Clock: fc, PollUnit: time.Second}, cfg: lockstate.Config{MaxHolders: 2}, s: Settings{Poll: 15 * time.Second}}
	q.id.HolderID = "me"
	queued := func(from int) *lockstate.State { return queuedBehind(ids("q", from, 20)...) }
	q.observe(queued(0))
	fc.Advance(m)
	q.observe(queued(3))
	before := q.observedHold
	assert.InDelta(t, float64(m*2/4), float64(before), float64(time.Second), "3 departures in a minute")
	q.secondaryWarned = fc.Now().Add(2 * m) // a wait that ends 2 minutes from now
	fc.Advance(3 * m)
	q.observe(queued(4))
	assert.Equal(t, before, q.observedHold, "the departure across the wait is not a pace")
	assert.Zero(t, q.departed)
	fc.Advance(m)
	q.observe(queued(8))
	assert.InDelta(t, float64(m*2/5), float64(q.observedHold), float64(time.Second), "4 departures in the minute after the wait")
}

// TestHoldEstimateIsCappedByTheCurrentHoldersAges: while every seat is
// held, seats that all turned over well within the measured pace (the
// oldest holder's age under two thirds of it) replace it by that age; a
// free seat, an old holder or an age close to the pace leave it, and
// poll-seconds stays the floor.
func TestHoldEstimateIsCappedByTheCurrentHoldersAges(t *testing.T) {
	t.Parallel()
	s := time.Second
	fc := clock.NewFake(forecastT0)
	q := &acquirer{d: Deps{Clock: fc, PollUnit: s}, cfg: lockstate.Config{MaxHolders: 2}, s: Settings{Poll: 15 * s}, observedHold: 10 * time.Minute}
	for _, c := range []struct {
		name    string
		holders []lockstate.Holder
		want    time.Duration
	}{
		{"both seats turned over in the last 40 s", holdersAt(-20*s, -40*s), 40 * s},
		{"one seat free", holdersAt(-20 * s), 10 * time.Minute},
		{"an old holder", holdersAt(-20*s, -2*time.Hour), 10 * time.Minute},
		{"the cap below poll-seconds", holdersAt(-2*s, -10*s), 15 * s},
	} {
		assert.Equal(t, c.want, q.holdEstimate(stateWith(c.holders)), c.name)
	}
	q.observedHold = 60 * s
	assert.Equal(t, 60*s, q.holdEstimate(stateWith(holdersAt(-20*s, -41*s))), "an age above two thirds of the pace: evenly spread turnover")
	assert.Equal(t, 39*s, q.holdEstimate(stateWith(holdersAt(-20*s, -39*s))), "an age under two thirds of it")
	q.observedHold = 0
	assert.Equal(t, 40*s, q.holdEstimate(stateWith(holdersAt(-20*s, -40*s))), "no pace yet: the oldest holder's age")
}

// queuedBehind is a state with two holders (admitted 1 and 2 minutes
// before forecastT0) and "me" queued behind the entries ahead, in order.
func queuedBehind(ahead ...string) *lockstate.State {
	st := stateWith(holdersAt(-time.Minute, -2*time.Minute))
	for _, id := range ahead {
		st.Queue = append(st.Queue, lockstate.Entry{HolderID: id})
	}
	st.Queue = append(st.Queue, lockstate.Entry{HolderID: "me"})
	return st
}

// ids are prefix+from … prefix+(to-1).
func ids(prefix string, from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf("%s%d", prefix, i))
	}
	return out
}
