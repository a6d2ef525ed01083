package acquire

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

var herdT0 = time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)

// firstAnswers are a job's first four answers (lookup and mint on the App
// JWT, config and state reads on the installation token, 250 ms apart),
// with the counts others added before each.
func firstAnswers(appOthers, instOthers int64) []ghclient.UsageSample {
	const window = 1700003600
	return []ghclient.UsageSample{
		{At: herdT0, App: true, Used: 100, Reset: window, Charged: true},
		{At: herdT0.Add(250 * time.Millisecond), App: true, Used: 101 + appOthers, Reset: window, Charged: true},
		{At: herdT0.Add(500 * time.Millisecond), Used: 500, Reset: window, Charged: true},
		{At: herdT0.Add(750 * time.Millisecond), Used: 501 + instOthers, Reset: window, Charged: true},
	}
}

func TestBurstRateReadsOtherJobsFromTheCounts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name                  string
		appOthers, instOthers int64
		want                  float64
	}{
		{"a lone job: only its own requests", 0, 0, 0},
		{"one other request is noise", 1, 0, 0},
		{"waiters' reads without a job starting are no burst", 0, 4, 0},
		{"quarter's herd: 5 arrivals a second", 3, 2, 5},
		{"40x4's herd: 10 arrivals a second", 5, 5, 10},
	} {
		assert.InDelta(t, tc.want, burstRate(firstAnswers(tc.appOthers, tc.instOthers)), 1e-9, tc.name)
	}
	s := firstAnswers(5, 5)
	s[1].Reset++ // the App's window turned between the two answers
	assert.Zero(t, burstRate(s), "pairs of two windows do not count: no other job's App request shows, so no burst")
	s = firstAnswers(5, 5)
	s[3].Charged = false // a 304 is not this job's own charge
	assert.InDelta(t, 11/2.0/0.5, burstRate(s), 1e-9)
}

func TestMintTicketIsTheLastAppCount(t *testing.T) {
	t.Parallel()
	tk, ok := mintTicket(firstAnswers(3, 2))
	require.True(t, ok)
	assert.Equal(t, ticket{window: 1700003600, count: 104, at: herdT0.Add(250 * time.Millisecond)}, tk)
	_, ok = mintTicket(firstAnswers(0, 0)[2:])
	assert.False(t, ok, "no App answer, no ticket (a plain token)")
}

func TestEngagesScalesWithTheLocksShare(t *testing.T) {
	t.Parallel()
	assert.False(t, engages(0, 1))
	assert.False(t, engages(5, 1), "10 jobs in 2 s at apiShare 1 are not paced")
	assert.True(t, engages(7, 1))
	assert.True(t, engages(2, 0.25), "a quarter of the App paces herds four times thinner")
	assert.False(t, engages(1.5, 0.25))
}

func arrivalsState(updated time.Time, log ...lockstate.RecentArrival) *lockstate.State {
	s := lockstate.Empty("seats")
	s.UpdatedAt = lockstate.FormatTime(updated)
	s.RecentArrivals = log
	return s
}

func logged(at time.Time, count int64) lockstate.RecentArrival {
	return lockstate.RecentArrival{At: lockstate.FormatTime(at), Window: 1700003600, Count: count}
}

func TestHerdSlotOrdersByTicket(t *testing.T) {
	t.Parallel()
	w := herdSlotLength(1) // 2 writes at 58 a minute
	require.InDelta(t, 2.069, w.Seconds(), 0.001)
	plan := func(count int64) *herdPlan {
		return &herdPlan{rate: 10, t: ticket{window: 1700003600, count: count}, start: herdT0}
	}
	now := herdT0.Add(2 * time.Second)

	// The first wave (nothing logged): spread by ticket over the wave's
	// expected size (10 a second × 1.5 s = 15), a slot apart.
	for _, tc := range []struct {
		count int64
		slot  time.Duration
	}{{100, 5 * w}, {102, 6 * w}, {118, 14 * w}, {120, 0}} {
		assert.Equal(t, herdT0.Add(tc.slot), plan(tc.count).slot(arrivalsState(herdT0.Add(-time.Hour)), 1, now), "ticket %d", tc.count)
	}

	// Logged: tickets 100 and 102 wrote (the last at 1.8 s). Ticket 110 has
	// 104, 106 and 108 ahead unwritten: it writes 4 slots after the last
	// write; 104 writes one slot after it.
	st := arrivalsState(herdT0.Add(1800*time.Millisecond), logged(herdT0.Add(1500*time.Millisecond), 100), logged(herdT0.Add(1800*time.Millisecond), 102))
	assert.Equal(t, herdT0.Add(1800*time.Millisecond+4*w), plan(110).slot(st, 1, now))
	assert.Equal(t, herdT0.Add(1800*time.Millisecond+w), plan(104).slot(st, 1, now))

	// A release wrote since: its write is its own job's slot's second
	// half, so the slots stay where the last first write put them.
	st.UpdatedAt = lockstate.FormatTime(herdT0.Add(3 * time.Second))
	assert.Equal(t, herdT0.Add(1800*time.Millisecond+w), plan(104).slot(st, 1, now))

	// Written out of order: 106 landed before 104. 108 still has 104 ahead.
	st.RecentArrivals = append(st.RecentArrivals, logged(herdT0.Add(2*time.Second), 106))
	st.UpdatedAt = lockstate.FormatTime(herdT0.Add(2 * time.Second))
	assert.Equal(t, herdT0.Add(2*time.Second+2*w), plan(108).slot(st, 1, now))

	// Another window's tickets and entries a whole log window old do not count.
	old := arrivalsState(herdT0, logged(now.Add(-lockstate.ArrivalLogWindow), 90),
		lockstate.RecentArrival{At: lockstate.FormatTime(herdT0), Window: 1700000000, Count: 1})
	assert.Equal(t, herdT0.Add(5*w), plan(100).slot(old, 1, now), "the first wave again")

	// A quarter of the App spreads its first wave a quarter's slot apart.
	assert.Equal(t, herdT0.Add(5*herdSlotLength(0.25)), plan(100).slot(arrivalsState(herdT0.Add(-time.Hour)), 0.25, now))

	// A quarter of the App: slots four times longer.
	assert.Equal(t, herdT0.Add(1800*time.Millisecond+16*w), plan(110).slot(arrivalsState(herdT0.Add(1800*time.Millisecond), logged(herdT0.Add(1500*time.Millisecond), 100), logged(herdT0.Add(1800*time.Millisecond), 102)), 0.25, now))
}

func TestHerdSlotIsBoundedAndBacksOff(t *testing.T) {
	t.Parallel()
	w := herdSlotLength(1)
	now := herdT0.Add(2 * time.Second)
	p := &herdPlan{rate: 10, t: ticket{window: 1700003600, count: 110}, start: herdT0}
	st := arrivalsState(herdT0.Add(1800*time.Millisecond), logged(herdT0.Add(1800*time.Millisecond), 100))
	first := p.slot(st, 1, now)
	assert.Equal(t, herdT0.Add(1800*time.Millisecond+5*w), first)
	limit := now.Add(time.Duration(herdMaxSlots*5*float64(w)) + herdMaxSlack)
	assert.Equal(t, limit, p.limit, "four times the first estimate, plus slack")

	// Tickets that never write (another tool's mints) keep moving the
	// anchor: the wait ends at the limit all the same.
	later := now.Add(2 * time.Minute)
	st = arrivalsState(later, logged(later.Add(-time.Second), 100))
	assert.Equal(t, limit, p.slot(st, 1, later))

	// A lost race: at least 100 ms, at most 400 ms + (2^losses − 1) half
	// slots, and never more than herdMaxBackoffHalfSlots of them.
	q := &herdPlan{rate: 10, t: ticket{window: 1700003600, count: 120}, start: herdT0}
	q.lost(now, 1, func() float64 { return 1 })
	assert.Equal(t, now.Add(400*time.Millisecond+w/2), q.backoff)
	q.lost(now, 1, func() float64 { return 1 })
	assert.Equal(t, now.Add(400*time.Millisecond+3*w/2), q.backoff, "the second loss: up to 3 half slots")
	for range 4 {
		q.lost(now, 1, func() float64 { return 1 })
	}
	assert.Equal(t, now.Add(400*time.Millisecond+herdMaxBackoffHalfSlots*w/2), q.backoff,
		"the sixth loss waits no longer than the second: the race was most likely lost to a release that has landed")
	q.lost(now, 1, func() float64 { return 0 })
	assert.Equal(t, now.Add(100*time.Millisecond), q.backoff)
	assert.Equal(t, now.Add(100*time.Millisecond), q.slot(arrivalsState(herdT0.Add(-time.Hour)), 1, now.Add(-time.Second)), "the backoff outlasts an earlier slot")
}

// minted is a logged first write of ticket count, minted at minted and
// written at at.
func minted(at, mintedAt time.Time, count int64) lockstate.RecentArrival {
	return lockstate.RecentArrival{At: lockstate.FormatTime(at), Window: 1700003600, Count: count, Minted: lockstate.FormatTime(mintedAt)}
}

// logRate reads the arrival rate from the log's mint times, whatever the
// latency of a job's first answers: a burst of 10 jobs a second is seen,
// a join spread out over minutes (its write logged now, its ticket minted
// a minute ago) is not taken for one, nor is a log without mint times (an
// older build's) or a handful of arrivals.
func TestLogRateDatesArrivalsByTheirMint(t *testing.T) {
	t.Parallel()
	now := herdT0.Add(3 * time.Second)
	me := ticket{window: 1700003600, count: 160, at: now}
	burst := arrivalsState(herdT0, minted(herdT0.Add(time.Second), herdT0, 100), minted(herdT0.Add(2*time.Second), herdT0.Add(time.Second), 120))
	assert.InDelta(t, 10.0, logRate(burst, me, now), 0.01, "30 arrivals in the 3 s since ticket 100 was minted")
	assert.True(t, engages(logRate(burst, me, now), 1))

	spread := arrivalsState(herdT0, minted(now.Add(-time.Second), now.Add(-time.Minute), 100))
	assert.Zero(t, logRate(spread, me, now), "minted a minute ago: outside the span")
	recent := arrivalsState(herdT0, minted(now.Add(-time.Second), now.Add(-8*time.Second), 100))
	assert.InDelta(t, 30.0/8, logRate(recent, me, now), 0.01)
	assert.False(t, engages(logRate(recent, me, now), 1), "30 arrivals over 8 s is no burst at apiShare 1")
	assert.True(t, engages(logRate(recent, me, now), 0.25), "but is at a quarter")

	old := arrivalsState(herdT0, logged(herdT0.Add(time.Second), 100))
	assert.Zero(t, logRate(old, me, now), "no mint time logged")
	few := arrivalsState(herdT0, minted(herdT0.Add(time.Second), herdT0, 154))
	assert.Zero(t, logRate(few, me, now), "3 arrivals are no burst")
	other := arrivalsState(herdT0, lockstate.RecentArrival{At: lockstate.FormatTime(herdT0), Window: 1700000000, Count: 10, Minted: lockstate.FormatTime(herdT0)})
	assert.Zero(t, logRate(other, me, now), "another window's tickets do not count")
	assert.Zero(t, logRate(nil, me, now))
}

// windowRate is the App's average arrival rate since its JWT window began:
// a burst that opens the window is seen from its fifth arrival on, a busy
// App's hour-old window reads low, and a mint stamped before the window
// began (a runner clock behind GitHub's) reads nothing.
func TestWindowRateAveragesSinceTheWindowBegan(t *testing.T) {
	t.Parallel()
	start := herdT0
	reset := start.Add(time.Hour).Unix()
	opened := ticket{window: reset, count: 20, at: start.Add(2 * time.Second)}
	assert.InDelta(t, 5.0, windowRate(opened), 0.01, "10 arrivals in the window's first 2 s")
	assert.True(t, engages(windowRate(opened), 0.25))
	assert.Zero(t, windowRate(ticket{window: reset, count: 6, at: start.Add(100 * time.Millisecond)}), "3 arrivals are no burst")
	assert.InDelta(t, 4.0, windowRate(ticket{window: reset, count: 8, at: start.Add(100 * time.Millisecond)}), 0.01, "at least a second")
	busy := ticket{window: reset, count: 400, at: start.Add(30 * time.Minute)}
	assert.False(t, engages(windowRate(busy), 1), "200 arrivals over 30 minutes")
	assert.Zero(t, windowRate(ticket{window: reset, count: 400, at: start.Add(-time.Minute)}))
	assert.Zero(t, windowRate(ticket{window: reset, count: 400}), "no mint time")
}

// A first-wave slot is a guess from the ticket alone: the job sleeps at
// most one slot before it reads again, and paces by the log once the
// herd's first writes are in it. The first slot from the log further than
// two slots away is read again after two (the arrivals ahead may be racing
// writes about to land); later ones are slept in full.
func TestAFirstWaveSleeperReadsAgainAfterOneSlot(t *testing.T) {
	t.Parallel()
	w := herdSlotLength(0.25)
	now := herdT0.Add(2 * time.Second)
	p := &herdPlan{rate: 5, t: ticket{window: 1700003600, count: 110}, start: herdT0}
	at := p.slot(arrivalsState(herdT0.Add(-time.Hour)), 0.25, now)
	require.Equal(t, herdT0.Add(7*w), at, "ticket 110: the last of the wave's 8 slots (5 a second × 1.5 s)")
	assert.Equal(t, w, p.sleep(at, now, 0.25), "sleeps one slot, then reads again")

	st := arrivalsState(herdT0.Add(3*time.Second), logged(herdT0.Add(3*time.Second), 100))
	at = p.slot(st, 0.25, now)
	require.Equal(t, herdT0.Add(3*time.Second+5*w), at, "four arrivals ahead, one slot each after the last first write")
	assert.Equal(t, 2*w, p.sleep(at, now, 0.25), "the first slot from the log: read again after two slots")
	assert.Equal(t, at.Sub(now), p.sleep(at, now, 0.25), "then slept in full")
	near := now.Add(w)
	assert.Equal(t, w, (&herdPlan{}).sleep(near, now, 0.25), "a slot within two slots is slept in full")
}

// The log keeps a written ticket while a lower one stays (LiveArrivals):
// the first wave writes by ticket rotation, not in ticket order, and a
// ticket that left first would count as an arrival ahead of every reader.
func TestHerdSlotCountsAnOldWriteAboveAYoungerLowerTicket(t *testing.T) {
	t.Parallel()
	w := herdSlotLength(1)
	now := herdT0.Add(2 * time.Minute)
	p := &herdPlan{rate: 10, t: ticket{window: 1700003600, count: 110}, start: herdT0}
	// Ticket 106 wrote 80 s ago, 100 (lower) 30 s ago, 102 and 104 since.
	st := arrivalsState(now.Add(-time.Second), logged(now.Add(-80*time.Second), 106), logged(now.Add(-30*time.Second), 100),
		logged(now.Add(-20*time.Second), 102), logged(now.Add(-10*time.Second), 104))
	assert.Equal(t, now.Add(-10*time.Second+2*w), p.slot(st, 1, now), "108 alone is ahead: 106 wrote")
}

// laterAnswers are a job's two App JWT answers (no other job's request
// between them) followed by its installation-token answers 500 ms apart
// over 4 s (reads and lost writes), with instPerSecond other installation
// requests a second counted between them.
func laterAnswers(instPerSecond int64) []ghclient.UsageSample {
	s := firstAnswers(0, 0)[:2]
	used, at := int64(500), s[1].At
	for i := range 9 {
		if i > 0 {
			used += 1 + instPerSecond/2
		}
		at = at.Add(500 * time.Millisecond)
		s = append(s, ghclient.UsageSample{At: at, Used: used, Reset: 1700003600, Charged: true})
	}
	return s
}

func TestInstallationRateCountsOthersRequestsTwoAnArrival(t *testing.T) {
	t.Parallel()
	assert.Zero(t, installationRate(nil))
	assert.Zero(t, installationRate(firstAnswers(9, 0)), "the App JWT's count is not the installation's")
	assert.InDelta(t, 10.0, installationRate(laterAnswers(20)), 1e-9, "20 other requests a second: 10 jobs starting")
	s := laterAnswers(20)
	for i := 6; i < len(s); i++ {
		s[i].Reset++ // the window turned: the pair across it does not count
		s[i].Used -= 1000
	}
	assert.InDelta(t, 10.0, installationRate(s), 1e-9)
	s = laterAnswers(20)
	s[6].Charged = false // a 304: nothing of this job's own in the rise
	assert.Greater(t, installationRate(s), 10.0)
}

// herdRate's signals by when a job asks: its first read reads its first
// answers (burstRate), the arrival log and the App's window; a job whose
// first write lost its race (first false) reads the log and the window
// again and, if they show nothing, the installation's count over all its
// answers, which engages only at twice the engage rate's requests: above
// all one lock's waiters may read (8.3 a second at apiShare 1).
func TestHerdRateReadsTheInstallationOnlyAfterALostFirstWrite(t *testing.T) {
	t.Parallel()
	now := herdT0.Add(5 * time.Second)
	tk := ticket{window: 1700003600, count: 104, at: herdT0.Add(250 * time.Millisecond)}
	empty := arrivalsState(now)
	for _, tc := range []struct {
		name    string
		first   bool
		samples []ghclient.UsageSample
		share   float64
		paced   bool
	}{
		{"first read, a burst in the first answers", true, firstAnswers(5, 5), 1, true},
		{"first read, nothing in the first answers: the installation's count is not read", true, laterAnswers(40), 1, false},
		{"lost first write in a 20-request-a-second installation (bench burst-40x4-fast)", false, laterAnswers(20), 1, true},
		{"lost first write among one lock's waiters at their full read budgets", false, laterAnswers(8), 1, false},
		{"lost first write in bench handoff (at most 6.7 other requests a second)", false, laterAnswers(6), 1, false},
		{"lost first write at apiShare 0.25: a quarter of the requests engage", false, laterAnswers(4), 0.25, true},
		{"lost first write, a quiet installation", false, laterAnswers(0), 1, false},
	} {
		rate := herdRate(tc.first, tc.samples, empty, tk, now, tc.share)
		assert.Equal(t, tc.paced, engages(rate, tc.share), "%s (rate %.2f)", tc.name, rate)
	}
	// The log decides first when it shows the burst.
	var log []lockstate.RecentArrival
	for i := range 8 {
		a := logged(now.Add(time.Duration(i-10)*100*time.Millisecond), int64(80+2*i))
		a.Minted = a.At
		log = append(log, a)
	}
	busyLog := arrivalsState(now, log...)
	require.True(t, engages(logRate(busyLog, tk, now), 1))
	assert.InDelta(t, logRate(busyLog, tk, now), herdRate(false, laterAnswers(40), busyLog, tk, now, 1), 1e-9)
}

// sustainedArrivals is an arrival log of n first writes, one ticket each
// (herdRequestsPerArrival steps apart from count 100), minted every gap
// from start.
func sustainedArrivals(start time.Time, gap time.Duration, n int) []lockstate.RecentArrival {
	var log []lockstate.RecentArrival
	for i := range n {
		at := start.Add(time.Duration(i) * gap)
		log = append(log, minted(at.Add(time.Second), at, int64(100+herdRequestsPerArrival*i)))
	}
	return log
}

// sustainedRate paces a burst too slow for herdEngageRate once the log
// shows herdSustainedMinArrivals × apiShare arrivals (at least 2) at
// herdSustainedRate × apiShare a second or faster, measured from the lowest ticket minted in the span to
// the job's own mint; it counts in poll units, so the compressed demo's
// arrivals a real second apart are a minute apart in its own time.
func TestSustainedRatePacesABurstThatLasts(t *testing.T) {
	t.Parallel()
	// Ticket 100 was minted at herdT0, one arrival every 0.5 s since: the
	// job with ticket 100 + 2k was minted k × 0.5 s later and reads 1 s
	// after its mint.
	at := func(k int) (ticket, time.Time) {
		mint := herdT0.Add(time.Duration(k) * 500 * time.Millisecond)
		return ticket{window: 1700003600, count: int64(100 + herdRequestsPerArrival*k), at: mint}, mint.Add(time.Second)
	}
	twoASecond := arrivalsState(herdT0, sustainedArrivals(herdT0, 500*time.Millisecond, 4)...)
	for _, tc := range []struct {
		name  string
		k     int
		s     *lockstate.State
		share float64
		unit  time.Duration
		paced bool
		rate  float64
	}{
		{"8 arrivals at 2 a second (bench burst-40x4-slow)", 8, twoASecond, 1, time.Second, true, 2},
		{"7 arrivals are too few", 7, twoASecond, 1, time.Second, false, 0},
		{"20 arrivals at 2 a second", 20, twoASecond, 1, time.Second, true, 2},
		{"in the compressed demo (a 60th of a second a unit) the span is half a second", 20, twoASecond, 1, time.Second / 60, false, 0},
		{"no poll unit", 20, twoASecond, 1, 0, false, 0},
		{"at a quarter of the App", 8, twoASecond, 0.25, time.Second, true, 2},
		{"2 arrivals at a quarter of the App: a tenth of its 20 writes a minute", 2, twoASecond, 0.25, time.Second, true, 2},
		{"1 arrival at a quarter of the App", 1, twoASecond, 0.25, time.Second, false, 0},
		{"2 arrivals at the whole App", 2, twoASecond, 1, time.Second, false, 0},
		{"4 arrivals at half the App", 4, twoASecond, 0.5, time.Second, true, 2},
		{"3 arrivals at half the App", 3, twoASecond, 0.5, time.Second, false, 0},
	} {
		tk, now := at(tc.k)
		rate, paced := sustainedRate(tc.s, tk, now, tc.share, tc.unit, 1)
		assert.Equal(t, tc.paced, paced, tc.name)
		assert.InDelta(t, tc.rate, rate, 0.01, tc.name)
	}

	// In poll units: 8 arrivals in 0.4 s are 20 a second, but a third of
	// an arrival a unit in the compressed demo.
	quick := arrivalsState(herdT0, minted(herdT0.Add(time.Second), herdT0, 100))
	tk := ticket{window: 1700003600, count: 116, at: herdT0.Add(400 * time.Millisecond)}
	rate, paced := sustainedRate(quick, tk, tk.at.Add(50*time.Millisecond), 1, time.Second, 1)
	assert.True(t, paced, "20 a second, counted from a second's floor: 8")
	assert.InDelta(t, 8, rate, 0.01)
	_, paced = sustainedRate(quick, tk, tk.at.Add(50*time.Millisecond), 1, time.Second/60, 1)
	assert.False(t, paced, "a third of an arrival a unit in the demo")

	// Measured mint to mint, not to the read: 8 arrivals at exactly 1.5 a
	// second pace; read at the job's first read (a second after its mint)
	// they would read as 1.26.
	mint := herdT0.Add(16 * time.Second / 3) // 8 arrivals at 1.5 a second
	tk = ticket{window: 1700003600, count: 116, at: mint}
	oneAndAHalf := arrivalsState(herdT0, minted(herdT0.Add(time.Second), herdT0, 100))
	rate, paced = sustainedRate(oneAndAHalf, tk, mint.Add(time.Second), 1, time.Second, 1)
	assert.True(t, paced)
	assert.InDelta(t, 1.5, rate, 0.01)
	_, paced = sustainedRate(oneAndAHalf, ticket{window: 1700003600, count: 116}, mint.Add(time.Second), 1, time.Second, 1)
	assert.False(t, paced, "without the ticket's mint time, counted to the read: 1.26 a second")

	// At a quarter of the App, 0.375 a second paces, below it nothing does.
	slow := arrivalsState(herdT0, minted(herdT0.Add(time.Second), herdT0, 100))
	tk = ticket{window: 1700003600, count: 116, at: herdT0.Add(20 * time.Second)}
	_, paced = sustainedRate(slow, tk, tk.at.Add(time.Second), 0.25, time.Second, 1)
	assert.True(t, paced, "8 arrivals in 20 s at a quarter")
	_, paced = sustainedRate(slow, tk, tk.at.Add(time.Second), 1, time.Second, 1)
	assert.False(t, paced, "8 arrivals in 20 s at apiShare 1 (bench burst: 64 in a minute)")

	// The span: a ticket minted more than 30 units before the read does not
	// count, nor does another window's, nor a log without mint times.
	tk = ticket{window: 1700003600, count: 200, at: herdT0.Add(40 * time.Second)}
	old := arrivalsState(herdT0, minted(herdT0.Add(time.Second), herdT0, 100))
	_, paced = sustainedRate(old, tk, tk.at.Add(time.Second), 1, time.Second, 1)
	assert.False(t, paced, "minted 41 s before the read: the 50 arrivals since are a backlog of 1.28 a second, under the rate, with no seat turning over")
	other := arrivalsState(herdT0, lockstate.RecentArrival{At: lockstate.FormatTime(herdT0), Window: 1700000000, Count: 10, Minted: lockstate.FormatTime(herdT0.Add(30 * time.Second))})
	_, paced = sustainedRate(other, tk, tk.at.Add(time.Second), 1, time.Second, 1)
	assert.False(t, paced, "another window")
	unminted := arrivalsState(herdT0, logged(herdT0.Add(35*time.Second), 180))
	_, paced = sustainedRate(unminted, tk, tk.at.Add(time.Second), 1, time.Second, 1)
	assert.False(t, paced, "no mint time logged")
	_, paced = sustainedRate(nil, tk, tk.at, 1, time.Second, 1)
	assert.False(t, paced)
}

// holdsState is s with holds of held logged, the last at now.
func holdsState(s *lockstate.State, now time.Time, held time.Duration, n int) *lockstate.State {
	for i := range n {
		s.NoteHold(now.Add(time.Duration(i-n+1)*time.Second), held)
	}
	return s
}

// One arrival a second is 60 joins a minute, under GitHub's 80; the
// releases of seats that turn over within the burst take it over
// (docs/performance.md §32). The sustained rule counts them: arrivals plus
// one release a seat each typical logged hold and a second, no more than
// the arrivals, against 1.1 writes a second, once they come to a tenth of
// a release a second.
func TestSustainedRateCountsTheSeatsTurnover(t *testing.T) {
	t.Parallel()
	// Ticket 100 + 2k was minted k seconds after herdT0; the job with
	// k = 8 reads a second after its mint: 8 arrivals at 1 a second.
	mint := herdT0.Add(8 * time.Second)
	tk := ticket{window: 1700003600, count: 100 + herdRequestsPerArrival*8, at: mint}
	now := mint.Add(time.Second)
	oneASecond := func() *lockstate.State {
		return arrivalsState(herdT0, sustainedArrivals(herdT0, time.Second, 4)...)
	}
	for _, tc := range []struct {
		name  string
		held  time.Duration
		holds int
		seats int
		share float64
		unit  time.Duration
		paced bool
	}{
		{"no hold logged yet", 0, 0, 4, 1, time.Second, false},
		{"4 seats of 5 s holds (1 + 0.67 a second)", 5 * time.Second, 2, 4, 1, time.Second, true},
		{"8 seats of 5 s holds: no more releases than arrivals (1 + 1)", 5 * time.Second, 2, 8, 1, time.Second, true},
		{"1 seat of 5 s holds (1 + 0.17)", 5 * time.Second, 1, 1, 1, time.Second, true},
		{"1 seat of 10 s holds (1 + 0.09)", 10 * time.Second, 2, 1, 1, time.Second, false},
		{"8 seats of 30 s holds (1 + 0.26)", 30 * time.Second, 2, 8, 1, time.Second, true},
		{"2 seats of 30 s holds: 0.06 releases a second are too few to count", 30 * time.Second, 2, 2, 1, time.Second, false},
		{"bench burst: 2 seats of 5 minute holds", 5 * time.Minute, 2, 2, 1, time.Second, false},
		{"the compressed demo: 5 s holds are 300 units", 5 * time.Second, 2, 4, 1, time.Second / 60, false},
		{"no poll unit", 5 * time.Second, 2, 4, 1, 0, false},
	} {
		s := holdsState(oneASecond(), herdT0.Add(7*time.Second), tc.held, tc.holds)
		rate, paced := sustainedRate(s, tk, now, tc.share, tc.unit, tc.seats)
		assert.Equal(t, tc.paced, paced, tc.name)
		if paced {
			assert.InDelta(t, 1, rate, 0.01, "the rate logged is the arrivals': "+tc.name)
		}
	}

	// At a quarter of the App, one arrival every 3 s is under the rate
	// (0.33 a second against 0.375); on one seat of 5 s holds it is 0.33
	// + 0.17 writes a second, over 0.275.
	every3s := func() *lockstate.State {
		return arrivalsState(herdT0, sustainedArrivals(herdT0, 3*time.Second, 4)...)
	}
	slowTk := ticket{window: 1700003600, count: 100 + herdRequestsPerArrival*8, at: herdT0.Add(24 * time.Second)}
	_, paced := sustainedRate(every3s(), slowTk, slowTk.at.Add(time.Second), 0.25, time.Second, 1)
	assert.False(t, paced, "a quarter of the App, no hold logged")
	quarter := holdsState(every3s(), herdT0.Add(20*time.Second), 5*time.Second, 2)
	_, paced = sustainedRate(quarter, slowTk, slowTk.at.Add(time.Second), 0.25, time.Second, 1)
	assert.True(t, paced, "a quarter of the App")
	_, paced = sustainedRate(quarter, slowTk, slowTk.at.Add(time.Second), 1, time.Second, 1)
	assert.False(t, paced, "the whole App")
}

// More seats, or shorter holds, never stop a burst from being paced: both
// only add releases to the minute.
func TestSustainedRateTurnoverIsMonotone(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(rt *rapid.T) {
		gap := time.Duration(rapid.IntRange(300, 3000).Draw(rt, "gapMs")) * time.Millisecond
		k := rapid.IntRange(8, 40).Draw(rt, "k")
		seats := rapid.IntRange(1, 16).Draw(rt, "seats")
		held := time.Duration(rapid.IntRange(1000, 60000).Draw(rt, "heldMs")) * time.Millisecond
		share := rapid.SampledFrom([]float64{0.25, 0.5, 1}).Draw(rt, "share")
		mint := herdT0.Add(time.Duration(k) * gap)
		tk := ticket{window: 1700003600, count: int64(100 + herdRequestsPerArrival*k), at: mint}
		logAt := herdT0.Add(time.Duration(k-1) * gap)
		paced := func(seats int, held time.Duration) bool {
			s := holdsState(arrivalsState(herdT0, sustainedArrivals(herdT0, gap, 4)...), logAt, held, 2)
			_, ok := sustainedRate(s, tk, mint.Add(time.Second), share, time.Second, seats)
			return ok
		}
		if paced(seats, held) {
			if !paced(seats+1, held) {
				rt.Fatalf("paced on %d seats, not on %d", seats, seats+1)
			}
			if shorter := held / 2; shorter >= time.Second && !paced(seats, shorter) {
				rt.Fatalf("paced at %s holds, not at %s", held, shorter)
			}
		}
	})
}

// A paced burst's jobs write a slot apart, later than they arrive: once it
// has lasted longer than the rule's 30 s span, no logged ticket lies in
// the span, and the arrivals since the newest logged ticket date the burst
// (backlogAhead). Without that, the jobs arriving from then on wrote at
// once, 17-26 writes in 10 s (docs/performance.md §32).
func TestSustainedRateCountsAPacedBacklog(t *testing.T) {
	t.Parallel()
	// The first 8 arrivals, one a second, wrote; the next 50 are paced.
	log := sustainedArrivals(herdT0, time.Second, 8)
	mint := herdT0.Add(57 * time.Second)
	tk := ticket{window: 1700003600, count: 100 + herdRequestsPerArrival*57, at: mint}
	now := mint.Add(time.Second)
	s := holdsState(arrivalsState(herdT0, log...), herdT0.Add(50*time.Second), 5*time.Second, 2)
	_, _, inSpan := loggedAhead(s, tk, now, herdSustainedSpan*time.Second)
	require.False(t, inSpan, "no logged ticket minted in the last 30 s")
	arrivals, newest, ok := backlogAhead(s, tk, now)
	require.True(t, ok)
	assert.InDelta(t, 50, arrivals, 0.01, "the arrivals since the newest logged ticket")
	assert.Equal(t, herdT0.Add(7*time.Second), newest)
	rate, paced := sustainedRate(s, tk, now, 1, time.Second, 4)
	assert.True(t, paced, "one a second on 4 seats of 5 s holds, dated by the backlog")
	assert.InDelta(t, 1, rate, 0.01)

	// Two a second pace without a seat turning over.
	fast := arrivalsState(herdT0, sustainedArrivals(herdT0, 500*time.Millisecond, 8)...)
	fastTk := ticket{window: 1700003600, count: 100 + herdRequestsPerArrival*100, at: herdT0.Add(50 * time.Second)}
	_, paced = sustainedRate(fast, fastTk, fastTk.at.Add(time.Second), 1, time.Second, 4)
	assert.True(t, paced, "92 arrivals in 46.5 s")

	// A quiet lock: 10 arrivals in the minute since the newest logged one.
	quietTk := ticket{window: 1700003600, count: 114 + herdRequestsPerArrival*10, at: herdT0.Add(67 * time.Second)}
	_, paced = sustainedRate(s, quietTk, quietTk.at.Add(time.Second), 1, time.Second, 4)
	assert.False(t, paced, "10 arrivals in 60 s")
	_, _, ok = backlogAhead(arrivalsState(herdT0), tk, now)
	assert.False(t, ok, "an empty log")
}

// The sustained rule is asked at a job's first read only: a job whose
// first write lost is asked again by the rates that see a burst at
// herdEngageRate (planHerd with first false).
func TestPlanHerdPacesASustainedBurstAtTheFirstReadOnly(t *testing.T) {
	ctx := context.Background()
	clk := clock.NewFake(herdT0.Add(5 * time.Second))
	em := emulator.New(emulator.Options{Clock: clk, Seed: 3})
	em.AddToken("writer-secret", emulator.TokenScope{Label: "writer", RateLimit: 5000})
	c, err := ghclient.New(ctx, ghclient.Config{APIURL: "http://emulator.test/", Token: "writer-secret",
		Transport: em.Transport(), Clock: clk, Jitter: func() float64 { return 0.5 }})
	require.NoError(t, err)
	tk := ticket{window: 1700003600, count: 100 + 2*herdRequestsPerArrival*4, at: herdT0.Add(4 * time.Second)}
	q := &acquirer{client: c, ticket: &tk, cfg: lockstate.DefaultConfig(), d: Deps{Clock: clk, PollUnit: time.Second}}
	s := arrivalsState(herdT0, sustainedArrivals(herdT0, 500*time.Millisecond, 4)...)

	plan := q.planHerd(s, true)
	require.NotNil(t, plan, "8 arrivals at 2 a second, at the first read")
	assert.InDelta(t, 2.0, plan.rate, 0.01)
	assert.Equal(t, tk, plan.t)
	assert.Nil(t, q.planHerd(s, false), "after a lost first write only the engage rate's rules decide")
	q.d.PollUnit = time.Second / 60
	assert.Nil(t, q.planHerd(s, true), "the compressed demo's clock")
}
