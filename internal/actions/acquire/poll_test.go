package acquire

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

func TestPollDelay(t *testing.T) {
	t.Parallel()
	const s = time.Second
	base := 15 * s
	cases := []struct {
		name string
		in   Schedule
		r    float64
		want time.Duration
	}{
		{"head polls fast", Schedule{Base: base, Rank: 0, Seats: 1}, 0, 1500 * time.Millisecond},
		{"head jitter spread is a third", Schedule{Base: base, Rank: 0, Seats: 1}, 0.999, 2 * s},
		{"second of two seats polls fast", Schedule{Base: base, Rank: 1, Seats: 2}, 0, 1500 * time.Millisecond},
		{"a rank past the seats polls one fast interval slower", Schedule{Base: base, Rank: 2, Seats: 2}, 0, 3 * s},
		{"and one more per further rank", Schedule{Base: base, Rank: 3, Seats: 2}, 0, 4500 * time.Millisecond},
		{"the last fast rank of four seats", Schedule{Base: base, Rank: 7, Seats: 4}, 0, 7500 * time.Millisecond},
		{"a fast rank never sleeps longer than base", Schedule{Base: base, Rank: 30, Seats: 16}, 0, base},
		{"first tail rank polls at base", Schedule{Base: base, Rank: 4, Seats: 2}, 0, base},
		{"tail backs off by rank", Schedule{Base: base, Rank: 7, Seats: 2}, 0, 37500 * time.Millisecond},
		{"tail is capped", Schedule{Base: base, Rank: 49, Seats: 2}, 0, 120 * s},
		{"unknown rank is the tail", Schedule{Base: base, Rank: -1, Seats: 2}, 0, base},
		// H(128) = 5.43315: rank 4 polls every 5 × 5.43315 × 0.2 s.
		{"fast ranks share the fast budget by rank", Schedule{Base: base, Rank: 4, Seats: 64, Queued: 200}, 0, 5433 * time.Millisecond},
		{"the head of a wide pool still polls fast", Schedule{Base: base, Rank: 0, Seats: 16, Queued: 200}, 0, 1500 * time.Millisecond},
		// The tail budget is shared by rank: the k-th of n tail ranks polls
		// at most every k × H(n) × 60 s / 200. H(968) = 7.45311.
		{"the tail shares the tail budget by rank", Schedule{Base: base, Rank: 150, Seats: 16, Queued: 1000}, 0, 266071 * time.Millisecond},
		{"so the first tail rank of a long queue is not held back by the far ones", Schedule{Base: base, Rank: 32, Seats: 16, Queued: 1000}, 0, base},
		{"an unknown rank takes an equal share", Schedule{Base: base, Rank: -1, Seats: 16, Queued: 1000}, 0, 5 * time.Minute},
		{"a far waiter polls at half its expected wait", Schedule{Base: base, Rank: 40, Seats: 2, Queued: 60, HoldEstimate: 20 * s}, 0, 259 * s},
		{"its interval is capped", Schedule{Base: base, Rank: 400, Seats: 2, Queued: 600, HoldEstimate: time.Hour}, 0, MaxTailInterval},
		// 70% of 37 turns × (30 s + 1 s) / 2 seats, not of 37 × 40 s / 2.
		{"no slower than the logged holds say", Schedule{Base: base, Rank: 40, Seats: 2, Queued: 60, HoldEstimate: 40 * s, LoggedHold: 30 * s}, 0, 401450 * time.Millisecond},
		{"a shorter estimate stands", Schedule{Base: base, Rank: 40, Seats: 2, Queued: 60, HoldEstimate: 20 * s, LoggedHold: 30 * s}, 0, 259 * s},
		{"the tail budget scales with apiShare", Schedule{Base: base, Rank: 150, Seats: 16, Queued: 1000, Share: 0.5}, 0, 532142 * time.Millisecond},
		{"so does the fast budget", Schedule{Base: base, Rank: 4, Seats: 64, Queued: 200, Share: 0.5}, 0, 10866 * time.Millisecond},
		{"a share above one is the whole", Schedule{Base: base, Rank: 150, Seats: 16, Queued: 1000, Share: 2}, 0, 266071 * time.Millisecond},
		{"fast floor is one unit", Schedule{Base: 2 * s, Rank: 0, Seats: 1}, 0, s},
		{"compressed unit", Schedule{Base: 1500 * time.Millisecond, Unit: 100 * time.Millisecond, Rank: 0, Seats: 1}, 0, 150 * time.Millisecond},
		{"sooner cooldown wins", Schedule{Base: base, Rank: 3, Seats: 1, UntilCooldown: 4 * s}, 0.5, 4*s + 125*time.Millisecond},
		{"later cooldown is ignored", Schedule{Base: base, Rank: 0, Seats: 1, UntilCooldown: 10 * s}, 0, 1500 * time.Millisecond},
		{"cooldown jitter stays under 250 ms", Schedule{Base: base, Rank: 3, Seats: 1, UntilCooldown: s}, 0.9999999, s + 249*time.Millisecond},
		// The waiters a release may hand a seat to now, on holds younger
		// than MinForecastHold × base = 60 s, poll at base/NextDivisor,
		// a third of it slower per rank.
		{"the next waiter of young holders polls every 0.75 s", Schedule{Base: base, Rank: 0, Seats: 2, Queued: 4, OldestHold: 10 * s}, 0, 750 * time.Millisecond},
		{"with a quarter of it in jitter", Schedule{Base: base, Rank: 0, Seats: 2, Queued: 4, OldestHold: 10 * s}, 0.999, 937 * time.Millisecond},
		{"the second of two seats every second", Schedule{Base: base, Rank: 1, Seats: 2, Queued: 4, OldestHold: 10 * s}, 0, s},
		{"never slower than the fast interval", Schedule{Base: base, Rank: 10, Seats: 16, OldestHold: 10 * s}, 0, 1500 * time.Millisecond},
		{"not a rank past the seats", Schedule{Base: base, Rank: 2, Seats: 2, Queued: 4, OldestHold: 10 * s}, 0, 3 * s},
		{"a holder of a minute with no forecast: any read may find its release", Schedule{Base: base, Rank: 0, Seats: 2, Queued: 4, OldestHold: time.Minute}, 0, 750 * time.Millisecond},
		{"the second seat of unforecast holds every second", Schedule{Base: base, Rank: 1, Seats: 4, Queued: 4, OldestHold: 10 * time.Minute}, 0, s},
		{"a forecast long hold sleeps toward its release", Schedule{Base: base, Rank: 0, Seats: 2, Queued: 4, OldestHold: time.Minute, Forecast: true, UntilRelease: 20 * s, ReleaseMargin: 10 * s}, 0, 10 * s},
		{"and polls at the window interval near it", Schedule{Base: base, Rank: 0, Seats: 2, Queued: 4, OldestHold: time.Minute, Forecast: true, UntilRelease: s / 2, ReleaseMargin: 10 * s}, 0, 500 * time.Millisecond},
		{"not without a holder's age", Schedule{Base: base, Rank: 0, Seats: 2, Queued: 4}, 0, 1500 * time.Millisecond},
		{"not while a burst churns the state", Schedule{Base: base, Rank: 0, Seats: 2, Queued: 12, OldestHold: 10 * s, Burst: true}, 0, 1500 * time.Millisecond},
		// H(4) = 2.0833: at a quarter share the head's budget is 2.0833 ×
		// 60 s / 75 reads.
		{"still inside the fast budget at apiShare", Schedule{Base: base, Rank: 0, Seats: 2, Queued: 4, OldestHold: 10 * s, Share: 0.25}, 0, 1667 * time.Millisecond},
		{"never below three quarters of a unit", Schedule{Base: 10 * s, Rank: 0, Seats: 2, Queued: 4, OldestHold: 10 * s}, 0, 750 * time.Millisecond},
		{"a forecast still decides", Schedule{Base: base, Rank: 0, Seats: 2, Queued: 4, OldestHold: 10 * s, Forecast: true, UntilRelease: 20 * s, ReleaseMargin: 10 * s}, 0, 10 * s},
		// Holds the releases logged shorter than the poll interval (burst-40x1):
		// 70% of the time to the two fast ranks of one seat, at the logged
		// hold plus a unit per admission, where the rank-based interval
		// (capped at 8 × base) would sleep through the seat handed to it.
		{"a tail rank of logged short holds sleeps to the fast ranks at their pace", Schedule{Base: base, Rank: 10, Seats: 1, Queued: 11, LoggedHold: 5 * s}, 0, 37800 * time.Millisecond},
		{"without the log it sleeps the rank-based interval", Schedule{Base: base, Rank: 10, Seats: 1, Queued: 11}, 0, 120 * s},
		{"the first tail rank of short holds", Schedule{Base: base, Rank: 2, Seats: 1, Queued: 3, LoggedHold: 5 * s}, 0, 4200 * time.Millisecond},
		{"two seats move twice as fast", Schedule{Base: base, Rank: 10, Seats: 2, Queued: 11, LoggedHold: 5 * s}, 0, 14700 * time.Millisecond},
		{"logged holds of a poll interval keep the rank-based interval", Schedule{Base: base, Rank: 10, Seats: 1, Queued: 11, LoggedHold: base}, 0, 120 * s},
		// 99 × H(998) × 0.3 s, H(998) = 7.48390.
		{"the tail budget still bounds short holds", Schedule{Base: base, Rank: 100, Seats: 1, Queued: 1000, LoggedHold: s}, 0, 222259 * time.Millisecond},
		{"with a sixth of its interval in jitter", Schedule{Base: base, Rank: 2, Seats: 1, Queued: 3, LoggedHold: 5 * s}, 0.999, 4899 * time.Millisecond},
		// Nothing says how long holds last: the holders' age paces the
		// tail (TailETAPercent of the wait at that pace), not the
		// rank-based interval that assumes a poll interval per admission.
		{"a tail rank that saw no hold end paces by the holders' age", Schedule{Base: base, Rank: 2, Seats: 1, Queued: 3, OldestHold: 4 * s}, 0, 2800 * time.Millisecond},
		{"the sleeps grow with the holds", Schedule{Base: base, Rank: 2, Seats: 1, Queued: 3, OldestHold: 40 * s}, 0, base},
		// H(298) × 0.3 s, H(298) = 6.27599.
		{"within the tail budget", Schedule{Base: base, Rank: 2, Seats: 1, Queued: 300, OldestHold: 100 * time.Millisecond}, 0, 1883 * time.Millisecond},
		{"not once it saw a hold end", Schedule{Base: base, Rank: 2, Seats: 1, Queued: 3, OldestHold: 4 * s, PaceSeen: true}, 0, base},
		{"nor with holds logged", Schedule{Base: base, Rank: 2, Seats: 1, Queued: 3, OldestHold: 4 * s, LoggedHold: 5 * s}, 0, 4200 * time.Millisecond},
		// A short hold's hand window (handwindow.go): asleep until the
		// earliest its release can land, then back to back through the
		// lead, then slower by an eighth of the time overdue, up to the
		// rank's interval without the window (the next interval here).
		{"the next waiter of a short hold sleeps to its window", Schedule{Base: base, Rank: 0, Seats: 1, Queued: 5, OldestHold: s, HandWindow: true, UntilHand: 4 * s, HandLead: 750 * time.Millisecond}, 0, 4 * s},
		{"with little jitter", Schedule{Base: base, Rank: 0, Seats: 1, Queued: 5, OldestHold: s, HandWindow: true, UntilHand: 4 * s, HandLead: 750 * time.Millisecond}, 0.999, 4*s + 10*time.Millisecond},
		{"at most base", Schedule{Base: base, Rank: 0, Seats: 1, Queued: 5, OldestHold: s, HandWindow: true, UntilHand: 40 * s, HandLead: 750 * time.Millisecond}, 0, base},
		{"then polls back to back", Schedule{Base: base, Rank: 0, Seats: 1, Queued: 5, OldestHold: 5 * s, HandWindow: true, UntilHand: -s / 2, HandLead: 750 * time.Millisecond}, 0, 10 * time.Millisecond},
		{"through the lead", Schedule{Base: base, Rank: 0, Seats: 1, Queued: 5, OldestHold: 5 * s, HandWindow: true, UntilHand: -750 * time.Millisecond, HandLead: 750 * time.Millisecond}, 0, 10 * time.Millisecond},
		{"slower the later the release", Schedule{Base: base, Rank: 0, Seats: 1, Queued: 5, OldestHold: 5 * s, HandWindow: true, UntilHand: -2750 * time.Millisecond, HandLead: 750 * time.Millisecond}, 0, 260 * time.Millisecond},
		{"never slower than without the window", Schedule{Base: base, Rank: 0, Seats: 1, Queued: 5, OldestHold: 5 * s, HandWindow: true, UntilHand: -time.Minute, HandLead: 750 * time.Millisecond}, 0, 750 * time.Millisecond},
		{"while a burst churns the state too", Schedule{Base: base, Rank: 0, Seats: 1, Queued: 40, OldestHold: 5 * s, Burst: true, HandWindow: true, UntilHand: -s / 2, HandLead: 750 * time.Millisecond}, 0, 10 * time.Millisecond},
		{"a fast rank past the seats sleeps until its turn has come", Schedule{Base: base, Rank: 1, Seats: 1, Queued: 5, OldestHold: s, HandWindow: true, UntilHand: 3 * s}, 0, 3 * s},
		{"then reads every unit, slower by an eighth of the time overdue", Schedule{Base: base, Rank: 1, Seats: 1, Queued: 5, OldestHold: 5 * s, HandWindow: true, UntilHand: -s / 2}, 0, 1062500 * time.Microsecond},
		{"never slower than its rank's interval", Schedule{Base: base, Rank: 1, Seats: 1, Queued: 5, OldestHold: 5 * s, HandWindow: true, UntilHand: -time.Minute}, 0, 3 * s},
		{"and is capped like any far waiter", Schedule{Base: base, Rank: 5000, Seats: 1, Queued: 10, LoggedHold: 10 * s}, 0, MaxTailInterval},
		{"the fast ranks ignore the log", Schedule{Base: base, Rank: 1, Seats: 1, Queued: 11, LoggedHold: 5 * s}, 0, 3 * s},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := PollDelay(tc.in, tc.r)
			assert.InDelta(t, float64(tc.want), float64(got), float64(time.Millisecond))
		})
	}
}

func TestPollScheduleBoundsTheOrganizationRequestRate(t *testing.T) {
	t.Parallel()
	// 50 queued jobs behind 2 seats at the default base: total polls per
	// minute with the mean jitter draw.
	perMinute := 0.0
	for rank := 0; rank < 50; rank++ {
		d := PollDelay(Schedule{Base: 15 * time.Second, Rank: rank, Seats: 2}, 0.5)
		perMinute += float64(time.Minute) / float64(d)
	}
	assert.Less(t, perMinute, 300.0, "50 queued jobs stay under 300 requests/min")
	head := PollDelay(Schedule{Base: 15 * time.Second, Rank: 0, Seats: 2}, 0.5)
	assert.LessOrEqual(t, head, 2*time.Second, "median handoff detection ≤ 2 s")
}

// TestFastRanksStayInsideTheFastBudget: whatever the seats and the queue,
// the waiters that poll fast send at most FastBudgetPerMinute state reads
// per minute together, or what the per-waiter floor allows when that is
// less; every rank of the whole queue together stays inside both budgets.
func TestFastRanksStayInsideTheFastBudget(t *testing.T) {
	t.Parallel()
	for _, held := range []time.Duration{0, 10 * time.Second} { // the next waiter of young holders polls faster
		for _, seats := range []int{1, 2, 4, 8, 16, 64, 500} {
			for _, queued := range []int{1, 3, 10, 50, 200, 1000} {
				fast, all := 0.0, 0.0
				for rank := range queued {
					d := PollDelay(Schedule{Base: 15 * time.Second, Rank: rank, Seats: seats, Queued: queued, OldestHold: held}, 0)
					rate := float64(time.Minute) / float64(d)
					all += rate
					if rank < FastRanks(seats) {
						fast += rate
					}
				}
				assert.LessOrEqual(t, fast, float64(FastBudgetPerMinute)+1e-6, "held %s, seats %d, queued %d", held, seats, queued)
				assert.LessOrEqual(t, all, float64(FastBudgetPerMinute+TailBudgetPerMinute)+1e-6, "held %s, seats %d, queued %d", held, seats, queued)
			}
		}
	}
}

// TestConflictStreakWidensTheNextWait: after joins that lost their CAS
// round, the next attempt waits at least half of an exponentially growing
// window (2 s, 4 s, ... capped at MaxConflictBackoff), widened to the burst's
// join window, instead of the fast poll, so a burst spreads out.
func TestConflictStreakWidensTheNextWait(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	q := &acquirer{
		d:   Deps{Clock: clock.NewFake(now), Jitter: func() float64 { return 0 }, PollUnit: time.Second},
		cfg: lockstate.Config{MaxHolders: 2},
		s:   Settings{Poll: 15 * time.Second},
	}
	st := lockstate.Empty("seats")
	for i := range 2 {
		st.Holders = append(st.Holders, lockstate.Holder{Entry: lockstate.Entry{HolderID: fmt.Sprintf("h%d", i)},
			AcquiredAt: lockstate.FormatTime(now.Add(-time.Hour)), ExpiresAt: lockstate.FormatTime(now.Add(time.Hour))})
	}
	for i := range 3 {
		st.Queue = append(st.Queue, lockstate.Entry{HolderID: fmt.Sprintf("q%d", i), QueuedAt: lockstate.FormatTime(now.Add(-10 * time.Minute))})
	}
	q.arrival = lockstate.NewArrival(st)
	for streak, want := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 5: 16 * time.Second, 9: MaxConflictBackoff / 2} {
		q.conflictStreak = streak
		assert.Equal(t, want, q.conflictDelay(st), "streak %d", streak)
	}
	// A burst in the queue (12 co-arrivals within the last minute) widens
	// the window to JoinSpacing per co-arrival.
	for i := range 12 {
		st.Queue = append(st.Queue, lockstate.Entry{HolderID: fmt.Sprintf("b%d", i), QueuedAt: lockstate.FormatTime(now.Add(-20 * time.Second))})
	}
	q.conflictStreak = 1
	assert.Equal(t, 12*JoinSpacing/2, q.conflictDelay(st))
	assert.Equal(t, 12*JoinSpacing, q.joinWindow(st), "the first join of a burst spreads over the same window")
	// A lock that may use a quarter of the App's limits spaces its joins
	// four times wider.
	q.cfg.APIShare = 0.25
	assert.Equal(t, 4*12*JoinSpacing/2, q.conflictDelay(st))
	assert.Equal(t, 4*12*JoinSpacing, q.joinWindow(st))
}

// TestALostJoinNearItsTurnWaitsAtMostHalfItsWait: however many joins in a
// row a job lost, its next try comes within half its expected wait for its
// turn (at least within minConflictWindow): with a seat free at once, in
// 1-2 s; next after the holders' release, within half a hold per seat. A
// job far back keeps the exponential window (bench burst-20: a job near
// the front slept 37 s after its sixth lost join, while the seat its
// arrival entitled it to sat free for 33 s).
func TestALostJoinNearItsTurnWaitsAtMostHalfItsWait(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	holders := func(st *lockstate.State, n int) {
		for i := range n {
			st.Holders = append(st.Holders, lockstate.Holder{Entry: lockstate.Entry{HolderID: fmt.Sprintf("h%d", i)},
				AcquiredAt: lockstate.FormatTime(now.Add(-time.Minute)), ExpiresAt: lockstate.FormatTime(now.Add(time.Hour))})
		}
	}
	delay := func(st *lockstate.State, streak int, jitter float64) time.Duration {
		q := &acquirer{
			d:   Deps{Clock: clock.NewFake(now), Jitter: func() float64 { return jitter }, PollUnit: time.Second},
			cfg: lockstate.Config{MaxHolders: 2},
			s:   Settings{Poll: 15 * time.Second},
		}
		q.arrival = lockstate.NewArrival(st)
		q.conflictStreak = streak
		return q.conflictDelay(st)
	}

	free := lockstate.Empty("seats")
	holders(free, 1)
	for _, streak := range []int{1, 3, 6, 9} {
		assert.Equal(t, time.Second, delay(free, streak, 0), "a seat free, streak %d: the window's lower half", streak)
		assert.Equal(t, 2*time.Second, delay(free, streak, 1), "a seat free, streak %d: at most minConflictWindow", streak)
	}

	next := lockstate.Empty("seats")
	holders(next, 2)
	// Next in line behind holds of a minute on 2 seats: its turn is
	// expected in 30 s, so the window is at most 15 s.
	assert.Equal(t, 4*time.Second, delay(next, 2, 1), "below the bound the exponential window stands")
	assert.Equal(t, 15*time.Second, delay(next, 6, 1), "64 s exponential, bounded by half the expected wait")
	assert.Equal(t, 15*time.Second/2, delay(next, 9, 0))

	far := lockstate.Empty("seats")
	holders(far, 2)
	for i := range 20 {
		far.Queue = append(far.Queue, lockstate.Entry{HolderID: fmt.Sprintf("q%d", i), QueuedAt: lockstate.FormatTime(now.Add(-10 * time.Minute))})
	}
	// Twenty ahead: its turn is about 10.5 minutes away, past the cap.
	assert.Equal(t, MaxConflictBackoff, delay(far, 9, 1), "far back, the exponential window up to MaxConflictBackoff")
}

// TestStaleReadSkipsAtMostThreeReadsInARow: a read older than the last state
// decided on is skipped, but never more than maxStaleSkips in a row (a
// writer whose clock runs behind only delays the decision), and a read as
// new as the last one is decided at once.
func TestStaleReadSkipsAtMostThreeReadsInARow(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *lockstate.State {
		s := lockstate.Empty("seats")
		s.UpdatedAt = lockstate.FormatTime(now.Add(d))
		return s
	}
	q := &acquirer{last: at(0)}
	assert.False(t, q.staleRead(at(0)), "the same version")
	assert.False(t, q.staleRead(at(time.Second)), "a newer version")
	for i := range maxStaleSkips {
		assert.True(t, q.staleRead(at(-time.Second)), "older read %d is skipped", i+1)
	}
	assert.False(t, q.staleRead(at(-time.Second)), "then decided on")
	assert.True(t, q.staleRead(at(-time.Second)), "the count starts again")
	assert.False(t, q.staleRead(at(0)), "a read as new as the last resets it")
	assert.Zero(t, q.staleSkips)
	noTime := lockstate.Empty("seats")
	assert.False(t, q.staleRead(noTime), "no updatedAt: decided on")
	assert.False(t, (&acquirer{}).staleRead(at(-time.Hour)), "nothing decided on yet")
}

// TestALostJoinPollsAtTheRankItWouldTake: a job with no entry whose write
// lost its race polls at the rank its join would take (inserted by
// arrival), not as a rank unknown at poll-seconds (bench handoff: 15-20 s
// asleep while a seat sat free).
func TestALostJoinPollsAtTheRankItWouldTake(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	st := lockstate.Empty("seats")
	for i := range 2 {
		id := fmt.Sprintf("acme/game:%d:build:default", 10+i)
		st.Holders = append(st.Holders, lockstate.Holder{Entry: lockstate.Entry{HolderID: id, Repository: "acme/game", RunID: fmt.Sprint(10 + i), RunAttempt: "1", QueuedAt: lockstate.FormatTime(now)},
			AcquiredAt: lockstate.FormatTime(now), ExpiresAt: lockstate.FormatTime(now.Add(time.Hour))})
	}
	for i := range 2 {
		id := fmt.Sprintf("acme/game:%d:build:default", 20+i)
		st.Queue = append(st.Queue, lockstate.Entry{HolderID: id, Repository: "acme/game", RunID: fmt.Sprint(20 + i), RunAttempt: "1", QueuedAt: lockstate.FormatTime(now)})
	}
	q := &acquirer{cfg: lockstate.Config{MaxHolders: 2}, id: lockstate.Identity{HolderID: "acme/game:30:build:default", Repository: "acme/game", Workflow: "Unity", Job: "build",
		RunID: "30", RunAttempt: "1", RunURL: "https://github.com/acme/game/actions/runs/30"}, s: Settings{Lease: time.Hour}}
	assert.Equal(t, -1, q.pollRank(st, now), "a job that has not tried to join has no rank")
	q.conflictStreak = 1
	assert.Equal(t, 2, q.pollRank(st, now), "after a lost join: behind the two queued entries")
	st.Queue = append(st.Queue, lockstate.Entry{HolderID: q.id.HolderID, Repository: "acme/game", RunID: "30", RunAttempt: "1", QueuedAt: lockstate.FormatTime(now)})
	assert.Equal(t, 2, q.pollRank(st, now), "its own entry's rank once queued")
	st.Queue = st.Queue[:2]
	for i := range 4 {
		st.Queue = append(st.Queue, lockstate.Entry{HolderID: fmt.Sprintf("acme/game:%d:build:default", 40+i), Repository: "acme/game", RunID: fmt.Sprint(40 + i), RunAttempt: "1", QueuedAt: lockstate.FormatTime(now)})
	}
	assert.Equal(t, -1, q.pollRank(st, now), "a join past the fast ranks stays unknown")
}

func TestOneShortLoggedHoldPacesAFarWaiter(t *testing.T) {
	t.Parallel()
	const s = time.Second
	now := forecastT0
	poll := 15 * s
	logged := func(holds ...time.Duration) *lockstate.State {
		st := stateWith(holdersAt(0))
		for _, h := range holds {
			st.NoteHold(now, h)
		}
		return st
	}
	assert.Zero(t, loggedHold(logged(), now, poll), "nothing logged")
	assert.Equal(t, 5750*time.Millisecond, loggedHold(logged(5750*time.Millisecond), now, poll), "one hold shorter than poll-seconds")
	assert.Zero(t, loggedHold(logged(poll), now, poll), "one hold of poll-seconds is not taken alone")
	assert.Zero(t, loggedHold(logged(4*time.Minute), now, poll), "one long hold (a reaped crash?) is not taken alone")
	assert.Equal(t, 5*time.Minute, loggedHold(logged(4*time.Minute, 5*time.Minute), now, poll), "two holds: the median (the upper of two), however long")
	assert.Equal(t, 6*s, loggedHold(logged(5*s, 9*s, 6*s), now, poll))
	assert.Zero(t, loggedHold(logged(5*s), now.Add(lockstate.HoldLogWindow), poll), "a hold older than the log's window")

	// The traced case (make bench-class BURST=10x1@1s): one seat, rank 3
	// (a tail rank: the fast ranks are 0 and 1), a pace seen once (so
	// HoldEstimate is poll-seconds), one 5.25 s hold logged. It slept 39 s
	// on the rank-based interval and noticed its seat 15 s late.
	sch := Schedule{Base: poll, Unit: s, Rank: 3, Seats: 1, Queued: 6, HoldEstimate: poll, PaceSeen: true}
	before := PollDelay(sch, 1)
	sch.LoggedHold = loggedHold(logged(5250*time.Millisecond), now, poll)
	after := PollDelay(sch, 1)
	assert.GreaterOrEqual(t, before, 28*s, "15 s a turn")
	// 70% of two turns at the logged hold plus a unit each, 8.75 s, and
	// a sixth of it in jitter at most.
	assert.LessOrEqual(t, after, 8750*time.Millisecond*7/6+time.Millisecond)
	sch.LoggedHold = loggedHold(logged(4*time.Minute), now, poll)
	assert.Equal(t, before, PollDelay(sch, 1), "a long single hold leaves the pace as it was")
}
