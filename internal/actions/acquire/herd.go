package acquire

import (
	"context"
	"math"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/store"
)

// Burst pacing by arrival tickets (docs/performance.md §11, §14). When many jobs
// of one GitHub App start within seconds, their first writes (a join or an
// admission each, all compare-and-swaps on one document) collide, every
// lost race is one more content-creating request, and GitHub refuses the
// App's writes for a minute once a minute holds 80 of them: every seat of
// the organization then waits. A herd is paced instead:
//
//   - Seen before any write, three ways, the fastest of which decides: the
//     rate-limit counts GitHub reports on every answer (x-ratelimit-used)
//     rise with the other jobs' requests, so a job's first four answers
//     (installation lookup, token mint, config and state reads) show how
//     many others started around it (burstRate), if those answers are far
//     enough apart; the arrival log dates the tickets of the last seconds
//     by their mint (logRate); and the App JWT's count since its window
//     began averages the App's arrivals (windowRate). Only a herd arriving
//     at herdEngageRate × apiShare jobs a second or faster is paced, or,
//     at a job's first read, one that the log shows arriving at
//     herdSustainedRate × apiShare a second or faster for at least
//     herdSustainedMinArrivals × apiShare jobs, or whose arrivals and the releases of
//     seats turning over within it come to herdSustainedWrites × apiShare
//     writes a second (sustainedRate, seatTurnover); a lone job, or a few
//     jobs seconds apart, write at once as before. A
//     job whose first write lost its race reads the log again, and the
//     installation's count over its answers so far (herdRate): a lagging
//     replica may have hidden the burst, or the job was among its first.
//   - Ordered without a conversation: the App JWT's count at a job's token
//     mint is its arrival ticket. Each first write logs its ticket in the
//     state (lockstate.RecentArrival), so a waiting job counts exactly the
//     arrivals ahead of it that have not written yet: the tickets between
//     the earliest logged one and its own, less the logged ones.
//   - Paced by the budget: a job writes one slot after the herd's last
//     logged first write per arrival still ahead of it, a slot being the
//     time two writes (its first write and its release) take at
//     herdBudgetPerMinute × apiShare writes a minute. A release does not
//     move the slots: its write is the second half of its job's slot. The
//     jobs of the first wave, which read before any of the herd had
//     written, spread one slot apart (at least herdFirstWaveSpacing) by
//     their ticket.
//   - Clear of the releases: a paced first write is not decided within
//     herdReleaseMarginReads read round trips (a second at 250 ms reads)
//     of a release the current holders are forecast to decide
//     (forecastReleases: each holder's acquiredAt plus the lock's typical
//     logged hold, when its holds are alike), since the two would race
//     for one compare-and-swap. The slot moves to just before the
//     release when the write before it leaves room, else to just after
//     it; the slots of the arrivals ahead are moved the same way, in
//     order, so every waiting job counts the same moves (clearSlot).
//   - Decided at the head: once its slot has come on an ordinary read,
//     the job reads the branch head and decides again on that
//     (herdFresh), since a lagging replica's version makes the slot come
//     too early.
//
// It only delays a job's first write; every decision is still made on the
// read just before it, and the arrival insertion (lockstate.Arrival) keeps
// a delayed join's queue position.
const (
	// herdEngageRate: a burst is paced when others arrive at least this
	// many jobs a second at apiShare 1, in proportion at a smaller share
	// (1.65 at 0.25): 12 times the rate the write budget of 66 writes a
	// minute admitted jobs at, before it became 58. Measured: pacing bench
	// `handoff` (6 jobs in 2 s) and `burst` (64 in a minute) costs them
	// requests and buys nothing, the tail bursts (5 to 10 a second) need
	// it.
	herdEngageRate = 6.6
	// herdBudgetPerMinute is the content writes a minute a paced burst
	// aims at, at apiShare 1. GitHub allows 80, the issue-23 target is 70,
	// and lost races count but are not paced: with the slots counted from
	// the last first write and the early read (sleep), 60 took bench
	// `burst-40x4` to 60-73 content writes a minute over six seed sets, 58
	// to 63-66 (docs/performance.md §16).
	herdBudgetPerMinute = 58
	// herdRequestsPerArrival is the App JWT requests each starting job
	// makes (installation lookup and token mint): the ticket step.
	herdRequestsPerArrival = 2
	// herdInstallationRequestsPerArrival is the installation-token
	// requests each starting job makes before its first write (config and
	// state reads): installationRate's step.
	herdInstallationRequestsPerArrival = 2
	// herdFirstWave is how long after a burst starts its first write is
	// visible to the others (lookup, mint, config read, state read, write:
	// about 1.5 s); the first wave spreads over its expected size.
	herdFirstWave = 1500 * time.Millisecond
	// herdFirstWaveSpacing is the first wave's shortest slot: a write's
	// read to commit window. The wave spreads a slot apart when the budget
	// asks for more (a quarter of the App: 8 s).
	herdFirstWaveSpacing = time.Second
	// herdMinOthers / herdMinAppOthers: the fewest requests of other jobs
	// (any bucket / the App JWT's) that count as a burst at all.
	herdMinOthers, herdMinAppOthers = 2, 1
	// herdMaxSlots bounds a paced job's wait at this many times its first
	// estimate (arrivals ahead plus one) of slots, plus herdMaxSlack: a
	// ticket that never writes (another tool's mint, a job cancelled
	// before its first write) must not hold later jobs back for good.
	herdMaxSlots = 4
	herdMaxSlack = 30 * time.Second
	// herdLogRateSpan is how far back logRate looks in the arrival log,
	// and herdMinLogArrivals the fewest arrivals it counts as a burst.
	herdLogRateSpan    = 10 * time.Second
	herdMinLogArrivals = 4
	// herdRateWindow is GitHub's primary rate-limit window: a window's
	// x-ratelimit-reset is its start plus an hour.
	herdRateWindow = time.Hour
	// herdMaxHeadReads bounds the reads at the branch head one job makes
	// before its paced first write attempts (herdFresh): the first due
	// attempt only. Measured on bench burst-40x4 (seeds 20261202-18): 1, 2
	// and 4 keep the same peak (49-55 content writes a minute against 64-66
	// without), 2 and 4 cost 1.0-1.7 requests a job more than 1 and wait
	// 2-4 s longer; on burst-20-quarter-limits all three answer 0 secondary
	// limits over the seed sets measured (docs/performance.md §13).
	herdMaxHeadReads = 1
	// herdMaxBackoffHalfSlots caps a lost paced write's random backoff
	// at this many half slots (3.1 s at apiShare 1). Most of a paced
	// burst's lost first writes lose to a release, not to another first
	// write (26 of 35 in bench burst-40x4, docs/performance.md §18), and
	// the release that won has landed: doubling on to 15 half slots (15.5
	// s) after the fourth loss left the loser's slot, and the seat a
	// release freed for it, empty, while every later ticket kept counting
	// it as ahead. Measured on bench burst-40x4 (docs/performance.md
	// §20): uncapped, p95 8.0-10.6 s over 36 seed sets (10.6 in two),
	// max 28.7 s, peak 59-70 writes a minute; capped at 3, 6.8-9.3 s over
	// 48 sets, max 13.0 s, peak 61-73 (above 70 in two); at 5, 6.9-9.9 s
	// and 61-76; at 2, peaks of 73 and 75 in 18 sets. The bench is not
	// deterministic: a rerun of the same sets moves a set's peak by up to
	// 7.
	herdMaxBackoffHalfSlots = 3
	// herdSustainedRate, herdSustainedMinArrivals and herdSustainedSpan
	// pace a burst too slow for herdEngageRate that lasts
	// (sustainedRate): at a job's first read, at least
	// herdSustainedMinArrivals arrivals (fewer at an apiShare below 1:
	// sustainedMinArrivals) at herdSustainedRate × apiShare a
	// poll unit (a second) or faster, counted from the lowest ticket the
	// log shows minted in the last herdSustainedSpan poll units. Joins at
	// 1.5 a second are 90 a minute, over GitHub's 80 before any release.
	// Measured over six seed sets (docs/performance.md §30): bench
	// burst-40x4-slow (2 a second on 4 seats) went from 101-104 write
	// attempts in its busiest minute, a handoff-noticed p95 of 27-32 s
	// and 24,030 s of secondary-limit waits to 76-83, 9.9-13.2 s and
	// 10 s; bench burst (64 jobs in a minute, 1.07 a second on average)
	// is paced from 1.2 a second on and then pays 1.8-1.9 charged
	// requests a job more, over its target, and is unchanged at 1.4 and
	// 1.5; bench handoff's 6 jobs never reach 8 arrivals.
	herdSustainedRate        = 1.5
	herdSustainedMinArrivals = 8
	herdSustainedSpan        = 30
	// herdSustainedMinShareArrivals: on a lock whose jobs may use share
	// of the App's limits, the sustained rule needs herdSustainedMinArrivals
	// × share arrivals, and at least this many (sustainedMinArrivals).
	// Eight unpaced first writes are a tenth of GitHub's 80 a minute, but
	// two fifths of a quarter's 20, before their releases and lost races
	// are counted: 20 jobs 2 s apart on 2 seats of 5 s holds at a quarter
	// drew 30-70 secondary-limit answers and a handoff-noticed p95 of
	// 53-58 s over three runs; counted from 2 arrivals, none and 14 s
	// (docs/performance.md §33).
	herdSustainedMinShareArrivals = 2
	// herdSustainedWrites paces a sustained burst below herdSustainedRate
	// whose seats turn over within it (seatTurnover): at a job's first
	// read, once its joins and the releases its seats make come to
	// herdSustainedWrites × apiShare content writes a poll unit (66 a
	// minute: each join and each release is one write, and a lost race
	// one more). Arrivals alone do not say it: one a second is 60 joins a
	// minute, under GitHub's 80, until four seats of 5 s holds add 37
	// releases. Measured with `make bench-class` (docs/performance.md
	// §32): 80 jobs one a second on 1, 2, 4 and 8 seats drew 1, 98, 947
	// and 952 secondary-limit answers, with busiest minutes of 81-245
	// write attempts; with this rule and backlogAhead none, 42-73; with
	// this rule alone the 4- and 8-seat cells still drew 4 and 14. Bench
	// burst (64 jobs in a minute on 2 seats, 4-6 minute holds) releases
	// too seldom to count (herdMinTurnover) and is unchanged.
	herdSustainedWrites = 1.1
	// herdTurnoverLead is the poll units a seat spends between two holds
	// besides the hold itself (the release's token mint, read and write,
	// and the next holder's admission): about a second.
	herdTurnoverLead = 1
	// herdMinTurnover is the fewest releases a poll unit that count
	// (seatTurnover): 6 a minute, one seat of 10 s holds or eight of 80
	// s. The arrival rate read over the span varies by a fifth about its
	// mean for a burst as random as bench burst's (64 jobs in a minute,
	// 1.07 a second), whose 2 seats of 4-6 minute holds release once in
	// two and a half minutes: counted, those releases would pace it
	// whenever its arrivals read above 1.1 a second.
	herdMinTurnover = 0.1
	// herdReleaseMarginReads is how far from a forecast release a paced
	// first write is decided, in the waiter's read round trips
	// (forecastReleases, clearSlot): about the time one compare-and-swap
	// is exposed to another (its read, the decision, its write: 1 s at
	// the bench's 250 ms reads and 500 ms writes). It is also the spread
	// of the logged holds beyond which no release is forecast. Measured
	// on bench burst-40x4-slow (40 jobs 0.5 s apart on 4 seats, 5 s
	// holds; docs/performance.md §31): a paced job's first write lost 44%
	// of its races before, most of them to a release, since the release
	// of 5 s holds lands about when the slot of the job two arrivals
	// behind comes (a slot is 2.07 s); 24% after. A fixed second at 80 ms
	// answers (bench burst-40x4-fast) moved slots that were not exposed
	// and cost 1.8 s of its p95.
	herdReleaseMarginReads = 4
	// herdReleaseLeadReads is how many of the waiter's read round trips
	// pass, besides the hold, from a holder's acquiredAt to its release's
	// decision: the admission write's answer (about two) and the
	// release's own token mint and state read (about two). Measured in
	// the bench: 5.75-6.25 s after acquiredAt for 5 s holds, at 250 ms
	// reads. The hand window's handLeadReads (3) is the fewest, for the
	// earliest a release can land; this is the typical, for when it is
	// decided.
	herdReleaseLeadReads = 4
)

// ticket is a job's arrival ticket: the App JWT bucket's count at its token
// mint, in the window that answer named, and when that answer came.
type ticket struct {
	window, count int64
	at            time.Time
}

// burstRate estimates how many other jobs a second started around this one
// from the usage samples of its first answers: the count each bucket rose
// between two consecutive answers, less this job's own charged requests,
// over the time between them, herdRequestsPerArrival requests an arrival.
// It is 0 unless others sent at least herdMinOthers requests, one of them
// an App JWT request (a job starting): waiters' reads alone are no burst.
func burstRate(samples []ghclient.UsageSample) float64 {
	appOthers, appSpan := othersBetween(samples, true)
	instOthers, instSpan := othersBetween(samples, false)
	others, span := appOthers+instOthers, appSpan+instSpan
	if others < herdMinOthers || appOthers < herdMinAppOthers || span <= 0 {
		return 0
	}
	return others / herdRequestsPerArrival / span
}

// othersBetween sums, over consecutive samples of one bucket (the App
// JWT's when app, else the installation's) in one rate-limit window, how
// far the count rose beyond this job's own charged answer, and the time
// those pairs span.
func othersBetween(samples []ghclient.UsageSample, app bool) (others, span float64) {
	prev := -1
	for i, s := range samples {
		if s.App != app {
			continue
		}
		if prev >= 0 && samples[prev].Reset == s.Reset && s.At.After(samples[prev].At) {
			d := s.Used - samples[prev].Used
			if s.Charged {
				d--
			}
			if d > 0 {
				others += float64(d)
			}
			span += s.At.Sub(samples[prev].At).Seconds()
		}
		prev = i
	}
	return others, span
}

// installationRate estimates how many jobs a second are starting from how
// fast the installation's count rose between this job's answers so far
// (every request any token of the installation sends is counted in one
// primary rate limit, and GitHub reports that count as x-ratelimit-used on
// every answer), at herdInstallationRequestsPerArrival requests an arrival
// (each starting job reads the config and the state). It counts every
// other request, waiters' polls included, so it reads high; that is why
// only a job whose first write lost its race consults it (planHerd), and
// why the engage rate it must reach (herdEngageRate × apiShare arrivals, so
// 13.2 requests a second at apiShare 1) stays above all that one lock's
// waiters may read (the fast and tail read budgets, 500 a minute × apiShare:
// 8.3 a second).
func installationRate(samples []ghclient.UsageSample) float64 {
	others, span := othersBetween(samples, false)
	if span <= 0 {
		return 0
	}
	return others / herdInstallationRequestsPerArrival / span
}

// mintTicket is the ticket of the last App JWT answer so far (the token
// mint's, at the job's first state read).
func mintTicket(samples []ghclient.UsageSample) (ticket, bool) {
	for i := len(samples) - 1; i >= 0; i-- {
		if s := samples[i]; s.App && s.Reset > 0 && s.Used >= 0 {
			return ticket{window: s.Reset, count: s.Used, at: s.At}, true
		}
	}
	return ticket{}, false
}

// windowRate is the App's arrivals a second since its JWT rate-limit
// window began: the ticket's count (herdRequestsPerArrival a job) over the
// time from the window's start (its reset, less GitHub's hour) to the
// mint, at least a second; 0 below herdMinLogArrivals arrivals or on a
// mint stamped before the window began (a runner clock behind GitHub's).
// An average since the window began is never above the rate at the
// busiest moment in it, so it never sees a burst that is not there. It
// sees the ones that open a window (the first jobs after a quiet hour, a
// fresh emulator), where neither the arrival log (no first write landed
// yet, or a lagging replica served a version from before them) nor a fast
// job's first answers do. In a busy App's hour-old window it reads low and
// the other two decide.
func windowRate(t ticket) float64 {
	if t.at.IsZero() || t.window <= 0 {
		return 0
	}
	age := t.at.Sub(time.Unix(t.window, 0).Add(-herdRateWindow))
	arrivals := float64(t.count) / herdRequestsPerArrival
	if age < 0 || arrivals < herdMinLogArrivals {
		return 0
	}
	return arrivals / max(age.Seconds(), 1)
}

// herdPlan is what a paced job decided at its first read.
type herdPlan struct {
	// rate is the others' arrival rate (burstRate); t the job's ticket;
	// start the time of its first read.
	rate  float64
	t     ticket
	start time.Time
	// limit is the latest the job waits (herdMaxSlots), set at the first
	// slot computed from a non-empty log; backoff the earliest it writes
	// after a lost race.
	limit, backoff time.Time
	losses         int
	// wave: the last slot came from the first wave's spread (nothing of
	// the herd logged yet); reread: the job has read again early once on
	// a slot from the log (sleep).
	wave, reread bool
	// releases are the current holders' forecast releases (herdWait sets
	// them on each read before slot); slot keeps its writes clear of them.
	releases releaseForecast
}

// releaseForecast is when the current holders are forecast to decide
// their releases (forecastReleases), and how long after its slot a paced
// job decides its write (the read it makes on waking).
type releaseForecast struct {
	due          []time.Time
	lead, margin time.Duration
}

// newReleaseForecast is the forecast of s's releases (forecastReleases)
// for a job whose reads take rtt.
func newReleaseForecast(s *lockstate.State, now time.Time, rtt time.Duration) releaseForecast {
	return releaseForecast{due: forecastReleases(s, now, rtt), lead: rtt, margin: herdReleaseMarginReads * rtt}
}

// forecastReleases forecasts when the holders of s decide their releases:
// each one's acquiredAt plus the typical hold the lock's releases logged
// (lockstate.State.HoldRange) plus herdReleaseLeadReads round trips of
// rtt. None (nil) before two holds are logged, when the logged holds
// spread wider than herdReleaseMarginReads round trips (holds too unalike
// to say when the next ends: a Unity build's minutes, a cache hit's
// seconds), without a measured round trip, or when an acquiredAt cannot
// be read or lies ahead of now (a skewed writer clock).
func forecastReleases(s *lockstate.State, now time.Time, rtt time.Duration) []time.Time {
	if s == nil || rtt <= 0 {
		return nil
	}
	typical, shortest, n := s.HoldRange(now)
	if n < 2 || typical-shortest > herdReleaseMarginReads*rtt {
		return nil
	}
	due, ok := holdEnds(s.Holders, typical+herdReleaseLeadReads*rtt, now)
	if !ok {
		return nil
	}
	return due
}

// ahead reports a forecast release that a write decided after a slot
// at or later could still come near.
func (f releaseForecast) ahead(at time.Time) bool {
	for _, r := range f.due {
		if at.Add(f.lead).Before(r.Add(f.margin)) {
			return true
		}
	}
	return false
}

// clearSlot moves a paced first write's slot at off the forecast
// releases: a write decided at at+f.lead within f.margin of a release's
// decision moves to a margin before the release when that is
// no earlier than floor and clear of the others, else to a margin after
// it (and on past any release that one meets). A move of more than
// limit (a slot's length: holders that release one after another leave
// no gap) keeps at.
func (f releaseForecast) clearSlot(at, floor time.Time, limit time.Duration) time.Time {
	if len(f.due) == 0 {
		return at
	}
	near := func(t time.Time) (time.Time, bool) {
		for _, r := range f.due {
			if d := t.Add(f.lead).Sub(r); d > -f.margin && d < f.margin {
				return r, true
			}
		}
		return time.Time{}, false
	}
	r, ok := near(at)
	if !ok {
		return at
	}
	if before := r.Add(-f.margin - f.lead); !before.Before(floor) {
		if _, clash := near(before); !clash {
			return before
		}
	}
	moved := at
	for range len(f.due) {
		moved = r.Add(f.margin - f.lead)
		if r, ok = near(moved); !ok {
			break
		}
	}
	if ok || moved.Sub(at) > limit {
		return at
	}
	return moved
}

// engages reports whether rate is a burst worth pacing on a lock whose jobs
// may use share of the App's limits.
func engages(rate, share float64) bool {
	return rate > 0 && rate >= herdEngageRate*share
}

// herdSlotLength is the time two content writes take at the paced budget.
func herdSlotLength(share float64) time.Duration {
	return time.Duration(2 * 60 * float64(time.Second) / (herdBudgetPerMinute * share))
}

// slot is when a paced job may make its first write, given the state it
// just read, from the state's arrival log, the plan and now. Its only
// effect is on the plan: the first slot computed from a non-empty log sets
// the plan's limit.
//
// The slots count from the log's last first write, not from the state's
// last write of any kind: a slot already holds its job's release, and a
// release that pushed the slots back as well was counted twice, so the
// herd wrote at about half the budget while freed seats sat empty (bench
// `burst-40x4`: a seat freed while jobs waited was taken 6.4-7.0 s later at
// the median, 10.8-14.7 s at p95, docs/performance.md §16).
func (p *herdPlan) slot(s *lockstate.State, share float64, now time.Time) time.Time {
	var n int
	var first int64
	var anchor time.Time
	for _, a := range s.LiveArrivals(now) {
		at, ok := lockstate.ParseTime(a.At)
		if !ok {
			continue
		}
		if at.After(anchor) {
			anchor = at
		}
		if a.Window != p.t.window || a.Count >= p.t.count {
			continue
		}
		if n == 0 || a.Count < first {
			first = a.Count
		}
		n++
	}
	var at time.Time
	p.wave = n == 0
	if n == 0 {
		// The first wave: nothing of the herd has landed yet. Spread by
		// ticket over the wave's expected size.
		size := max(1, int64(math.Ceil(p.rate*herdFirstWave.Seconds())))
		at = p.start.Add(time.Duration((p.t.count/herdRequestsPerArrival)%size) * max(herdFirstWaveSpacing, herdSlotLength(share)))
		at = p.releases.clearSlot(at, now, herdSlotLength(share))
	} else {
		if anchor.IsZero() {
			anchor = now
		}
		ahead := max(0, float64(p.t.count-first)/herdRequestsPerArrival-float64(n))
		w := herdSlotLength(share)
		at = anchor.Add(time.Duration((ahead + 1) * float64(w)))
		if len(p.releases.due) > 0 {
			// The arrivals ahead write first, a slot apart, each moved
			// clear of the releases as its own job moves it: at least
			// herdFirstWaveSpacing after the write before it. Past the
			// last forecast release the slots are a slot apart again.
			at = anchor
			for left := int(math.Round(ahead)) + 1; left > 0; left-- {
				if !p.releases.ahead(at) {
					at = at.Add(time.Duration(left) * w)
					break
				}
				at = p.releases.clearSlot(at.Add(w), clock.Later(at.Add(herdFirstWaveSpacing), now), w)
			}
		}
		if p.limit.IsZero() {
			p.limit = now.Add(time.Duration(herdMaxSlots*(ahead+1)*float64(w)) + herdMaxSlack)
		}
		if at.After(p.limit) {
			at = p.limit
		}
	}
	if p.backoff.After(at) {
		at = p.backoff
	}
	return at
}

// sleep is how long a paced job sleeps before it reads again, given the
// slot it just computed: until the slot, but at most one slot's length
// while the slot is the first wave's, and at most two slots the first time
// a slot from the log is further away than that.
//
// A first-wave slot is a guess from the ticket alone, up to the wave's size
// in slots away (56 s at a quarter of the App), and every later arrival
// counts the sleeper as an arrival ahead of it; once the herd's first
// writes are logged, the next read paces it by the log instead. A job's
// first slot from the log is computed while the burst's unpaced first
// writes are still racing: the arrivals whose writes lost count as ahead
// until they land, a second or two later, and a job that slept on that
// count left freed seats empty for up to a dozen seconds. One early read
// corrects it for about half a request a job. Measured over four seed sets
// (docs/performance.md §16): bench burst-20-quarter-fast handoff noticed
// p95 19.2-21.2 s with neither bound, 17.4-18.6 s with the first,
// 12.1-14.8 s with both; burst-40x4-fast 7.9-12.8 s with the first,
// 6.5-10.0 s with both.
func (p *herdPlan) sleep(at, now time.Time, share float64) time.Duration {
	d := at.Sub(now)
	w := herdSlotLength(share)
	switch {
	case p.wave && d > w:
		return w
	case !p.wave && !p.reread && d > 2*w:
		p.reread = true
		return 2 * w
	}
	return d
}

// lost records a lost compare-and-swap race of the first write: the next
// try waits 100-400 ms (a fresh read), plus up to (2^losses − 1) half slots
// drawn at random, at most herdMaxBackoffHalfSlots of them.
func (p *herdPlan) lost(now time.Time, share float64, jitter func() float64) {
	p.losses++
	b := 100*time.Millisecond + time.Duration(jitter()*float64(300*time.Millisecond))
	halves := min(int64(1)<<min(p.losses, 4)-1, herdMaxBackoffHalfSlots)
	b += time.Duration(jitter() * float64(halves) * float64(herdSlotLength(share)) / 2)
	p.backoff = now.Add(b)
}

// planHerd decides on a read of s, before this job's first write, whether
// it paces that write (nil when not: no burst, or no ticket to order it by).
func (q *acquirer) planHerd(s *lockstate.State, first bool) *herdPlan {
	if q.client == nil || q.ticket == nil {
		return nil
	}
	rate := herdRate(first, q.client.Usage(), s, *q.ticket, q.now(), q.cfg.Share())
	if !engages(rate, q.cfg.Share()) {
		// A slower burst that lasts, at the first read only: a job
		// whose first write lost is asked again by the rates above.
		if !first {
			return nil
		}
		low, sustained := sustainedRate(s, *q.ticket, q.now(), q.cfg.Share(), q.d.PollUnit, q.cfg.MaxHolders)
		if !sustained {
			return nil
		}
		rate = low
	}
	return &herdPlan{rate: rate, t: *q.ticket, start: q.now()}
}

// herdRate is the others' arrival rate a job's pacing decision reads, on a
// lock whose jobs may use share of the App's limits.
//
// At the first read (first) the job's first answers count (burstRate),
// then the arrival log (logRate) and the App's window (windowRate). Later,
// planHerd is asked again only for a job whose first write lost its race
// (in the write round that lost, and on the loop's next reads), and the
// job's answers since it started span its waits, so other waiters' reads
// in them would read as arrivals: the log and the window decide, and the
// installation's count (installationRate) only at the engage rate's
// installation requests. That last one reaches the first jobs of a burst
// answered fast (bench burst-40x4-fast: 80 ms answers): their first answers
// come too close together to show the burst, their tickets are too early
// for the log or the window to show it, and three of their unpaced first
// writes lose in a row. Unpaced, such a job then polls as a rank unknown,
// poll-seconds and more, while every paced job behind it counts it as an
// arrival ahead and keeps a slot free for it: the seats freed in the
// burst's first seconds sat empty for 15-18 s (docs/performance.md §19).
func herdRate(first bool, samples []ghclient.UsageSample, s *lockstate.State, t ticket, now time.Time, share float64) float64 {
	var rate float64
	if first {
		rate = burstRate(samples)
	}
	if !engages(rate, share) {
		rate = max(rate, logRate(s, t, now), windowRate(t))
	}
	if !first && !engages(rate, share) {
		rate = max(rate, installationRate(samples))
	}
	return rate
}

// logRate estimates how many jobs a second started around this one from
// the state's arrival log and this job's ticket: the arrivals from the
// oldest logged ticket minted in the last herdLogRateSpan to this job's own
// (herdRequestsPerArrival ticket steps each), over the time since that
// ticket was minted (lockstate.RecentArrival.Minted), at least a second.
// It is 0 below herdMinLogArrivals arrivals, or when no logged ticket of
// the window says when it was minted (an older build wrote the log).
//
// burstRate reads the burst from the counts between a job's own first
// answers, so it sees one only when those answers are far enough apart for
// others' requests to fall between them: at 80 ms a read instead of the
// bench's 250 ms, no job of bench burst-40x4 saw one, none was paced, and
// its seeds drew 239-268 secondary-limit answers at 111-125 write attempts
// a minute. The log spans the whole burst, whatever the latency. The mint
// time, not the first write's (At), dates an arrival: a join spread out
// over minutes (burst.go) logs its write long after its ticket, and
// counted from its write, every arrival since its ticket would look as
// if it came in the last seconds (bench wide and burst paced some of their
// jobs so).
func logRate(s *lockstate.State, t ticket, now time.Time) float64 {
	arrivals, oldest, ok := loggedAhead(s, t, now, herdLogRateSpan)
	if !ok || arrivals < herdMinLogArrivals {
		return 0
	}
	return arrivals / max(now.Sub(oldest).Seconds(), 1)
}

// loggedTicket is one logged first write's ticket of a job's window, below
// its own, and when it was minted.
type loggedTicket struct {
	count  int64
	minted time.Time
}

// loggedBelow is the tickets of t's window below t in the arrival log of
// s that say when they were minted, no later than now (an older build
// logged no mint time; a skewed clock may log one ahead).
func loggedBelow(s *lockstate.State, t ticket, now time.Time) []loggedTicket {
	if s == nil {
		return nil
	}
	var out []loggedTicket
	for _, a := range s.RecentArrivals {
		minted, valid := lockstate.ParseTime(a.Minted)
		if valid && a.Window == t.window && a.Count < t.count && !minted.After(now) {
			out = append(out, loggedTicket{count: a.Count, minted: minted})
		}
	}
	return out
}

// loggedAhead finds, in the arrival log of s, the lowest ticket of t's
// window below t minted within span of now: the arrivals from it to t
// (herdRequestsPerArrival ticket steps each) and when it was minted. ok is
// false when no logged ticket qualifies (none, none minted in the span, or
// none that says when it was minted: an older build wrote the log).
func loggedAhead(s *lockstate.State, t ticket, now time.Time, span time.Duration) (arrivals float64, oldest time.Time, ok bool) {
	var first int64
	for _, l := range loggedBelow(s, t, now) {
		if now.Sub(l.minted) <= span && (!ok || l.count < first) {
			oldest, first, ok = l.minted, l.count, true
		}
	}
	if !ok {
		return 0, time.Time{}, false
	}
	return float64(t.count-first) / herdRequestsPerArrival, oldest, true
}

// backlogAhead finds, in the arrival log of s, the newest ticket of t's
// window below t, whenever it was minted: the arrivals since it, none of
// which has written yet, and when it was minted. It dates a paced burst's
// backlog: its jobs write a slot apart, later than they arrive, so once
// the backlog is older than herdSustainedSpan, no logged ticket lies in
// the span while the arrivals go on.
func backlogAhead(s *lockstate.State, t ticket, now time.Time) (arrivals float64, newest time.Time, ok bool) {
	var last int64
	for _, l := range loggedBelow(s, t, now) {
		if !ok || l.count > last {
			newest, last, ok = l.minted, l.count, true
		}
	}
	if !ok {
		return 0, time.Time{}, false
	}
	return float64(t.count-last) / herdRequestsPerArrival, newest, true
}

// sustainedRate is the arrival rate of a burst too slow for herdEngageRate
// that lasts (docs/performance.md §30, §32, §33), as a job sees it at its first
// read: the arrivals the log shows from the lowest ticket minted in the
// last herdSustainedSpan poll units to this job's own, over the time
// between their mints. When no logged ticket was minted in the span, the
// arrivals since the newest logged one count instead (backlogAhead): a
// paced burst that has lasted longer than the span. It paces (ok) from
// sustainedMinArrivals(share) arrivals at herdSustainedRate × share arrivals
// a poll unit or faster, or when those arrivals and the releases of the
// lock's seats (seatTurnover, on seats seats) come to herdSustainedWrites
// × share writes a poll unit; rate is in arrivals a second, for the log
// line.
//
// It counts in poll units, a second but in the compressed demo
// (actionkit.Deps.PollUnit: a sixtieth of a second), whose jobs, about 10
// units apart in its own time, arrive a sixth of a second apart in real
// time, and whose reaper mints a token every real second: counted in
// seconds, the rule paced the demo's jobs by slots a minute and a half
// away, and the demo ran out of time.
func sustainedRate(s *lockstate.State, t ticket, now time.Time, share float64, unit time.Duration, seats int) (rate float64, ok bool) {
	if unit <= 0 {
		return 0, false
	}
	arrivals, oldest, found := loggedAhead(s, t, now, herdSustainedSpan*unit)
	if !found {
		arrivals, oldest, found = backlogAhead(s, t, now)
	}
	if !found || arrivals < sustainedMinArrivals(share) {
		return 0, false
	}
	end := now
	if !t.at.IsZero() && t.at.Before(now) {
		end = t.at
	}
	perUnit := arrivals / max(float64(end.Sub(oldest))/float64(unit), 1)
	if perUnit < herdSustainedRate*share {
		turnover := seatTurnover(s, now, seats, unit, share, perUnit)
		if turnover <= 0 || perUnit+turnover < herdSustainedWrites*share {
			return 0, false
		}
	}
	return perUnit * float64(time.Second) / float64(unit), true
}

// sustainedMinArrivals is how many arrivals the sustained rule needs on a
// lock whose jobs may use share of the App's limits: herdSustainedMinArrivals
// × share, rounded up, and at least herdSustainedMinShareArrivals.
func sustainedMinArrivals(share float64) float64 {
	return max(herdSustainedMinShareArrivals, math.Ceil(herdSustainedMinArrivals*share))
}

// seatTurnover is the releases a poll unit seats seats make while
// arrivals come at arrivals a poll unit: one a seat each typical hold the
// lock's releases logged (lockstate.State.HoldRange) plus
// herdTurnoverLead, and no more than the arrivals (a seat releases only
// the jobs that arrive). It is 0 before a hold is logged, and below
// herdMinTurnover × share.
func seatTurnover(s *lockstate.State, now time.Time, seats int, unit time.Duration, share, arrivals float64) float64 {
	if s == nil || unit <= 0 {
		return 0
	}
	typical, _, n := s.HoldRange(now)
	if n == 0 {
		return 0
	}
	releases := min(arrivals, float64(max(seats, 1))/(float64(typical)/float64(unit)+herdTurnoverLead))
	if releases < herdMinTurnover*share {
		return 0
	}
	return releases
}

// newcomer reports a job with neither a queue entry nor a seat in s: its
// next write is its first.
func (q *acquirer) newcomer(s *lockstate.State) bool {
	return s != nil && lockstate.QueuePosition(s, q.id.HolderID) == 0 && lockstate.HolderIndex(s, q.id.HolderID) < 0
}

// herdWait sleeps until a paced newcomer's slot when it has not come yet
// (slept reports that it did; the caller reads again).
func (q *acquirer) herdWait(ctx context.Context, s *lockstate.State) (slept bool, err error) {
	if q.herd == nil && q.firstLost && q.newcomer(s) {
		// A first write lost its race: the log may show a burst that
		// the first read, from a lagging replica or before any of the
		// burst had written, did not. Without a lost race the first
		// read's decision stands.
		q.herd = q.planHerd(s, false)
	}
	if q.herd == nil || !q.newcomer(s) {
		return false, nil
	}
	q.joinSpread = true // the pacing replaces the join spread (burst.go)
	now := q.now()
	rtt := q.rtt.min()
	q.herd.releases = newReleaseForecast(s, now, rtt)
	at := q.herd.slot(s, q.cfg.Share(), now)
	if !at.After(now) {
		return false, nil
	}
	if !q.herdLogged {
		q.herdLogged = true
		q.a.Printf("A burst is arriving (about %.0f other jobs a second): pacing this job's first write of %s to keep the App under GitHub's content-creation limit; first try in %d ms.",
			q.herd.rate, q.s.Target.Lock, at.Sub(now).Milliseconds())
	}
	return true, q.sleep(ctx, q.herd.sleep(at, now, q.cfg.Share())+time.Duration(q.d.Jitter()*float64(200*time.Millisecond)))
}

// herdFresh is the state at the branch head (store.Store.LoadFresh) for a
// paced newcomer whose slot has come on snap, an ordinary read: nil once
// the run made its herdMaxHeadReads (the state it decides on next is that
// read's, or one after it), when the head is the version snap is, or when
// the head cannot be read (the write then goes ahead on snap, as without
// this).
//
// A lagging replica (docs/emulator.md "Replica lag") serves an ordinary
// read an older version, and the slot decided on it comes too early: its
// arrival log and updatedAt are the past's. In a paced burst such a first
// write is certain to lose its compare-and-swap, and every lost write is a
// content-creating request that the writer App's secondary limit counts
// like a landed one: in bench burst-20-quarter-limits (20 a minute), three
// first-wave admissions decided on versions seconds old took seed 20261298
// to 21 write attempts in a minute. The head read costs two requests (the
// ref, then the file at its commit), at most herdMaxHeadReads times a run;
// the slot is decided again on its answer.
func (q *acquirer) herdFresh(ctx context.Context, snap store.Snapshot) *store.Snapshot {
	if q.herd == nil || !q.newcomer(snap.State) || q.herdHeadReads >= herdMaxHeadReads {
		return nil
	}
	q.herdHeadReads++
	fresh, _, err := q.st.LoadFresh(ctx)
	if err != nil {
		return nil
	}
	if fresh.SHA == snap.SHA || fresh.State == nil {
		return nil
	}
	q.last = fresh.State
	return &fresh
}

// noteArrival logs this job's first write, with its ticket, in the state
// it is about to write (lockstate.State.NoteArrival).
func (q *acquirer) noteArrival(s *lockstate.State, wasNewcomer bool) {
	if !wasNewcomer || q.ticket == nil {
		return
	}
	s.NoteMintedArrival(q.now(), q.ticket.at, q.ticket.window, q.ticket.count)
}
