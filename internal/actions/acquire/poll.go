package acquire

import "time"

// Polling schedule constants.
const (
	// FastDivisor: an entry that could be admitted next polls at
	// max(unit, base/FastDivisor) — 1.5 s at the default 15 s base — so a
	// freed seat is taken within about two seconds.
	FastDivisor = 10
	// NextDivisor: the next interval is max(3/4 unit, base/NextDivisor),
	// 0.75 s at the default base. While every holder has held for less
	// than MinForecastHold × base, or no release can be forecast, the
	// waiters a release may hand a seat to now (rank < Seats) poll at it,
	// a third of it slower per rank (the next waiter 0.75 s, rank 1 1 s,
	// never slower than the fast interval), with less jitter. A handed seat idles until its waiter's
	// next read, and on a short hold that gap is a large share of the seat
	// time (about 7–9% at 1.5–2 s polls on 10 s holds, about 5% at these:
	// docs/performance.md §10). On longer holds the gap is a small share,
	// and holds of a minute or more are forecast (forecast.go). A hold
	// that cannot be forecast (none seen to end yet, or holds as unalike
	// as a crashed holder's reaping and a finished build) may end at any
	// read, and a lagging replica can hide its release from one or two
	// reads in a row: at 1.5–2 s those waiters noticed a seat the reaper
	// freed up to 6 s late (docs/performance.md §12). Around a
	// forecast release the next waiter's fast polls run a third slower
	// than the next interval, 1 s (the forecast's margin is where a
	// release that comes early is noticed; at 0.75 s the long-hold
	// workloads read a fifth more for a p95 notice of 1.9 s instead of
	// 2.6 s). Not while a burst shows in the queue: its joins change
	// the state every second or two, and each faster read of a changed (or
	// lagging) version is a charged 200.
	NextDivisor = 20
	// HandDivisor: a waiter that a short hold's release may hand its seat
	// polls every Unit/HandDivisor (10 ms) plus its read's round trip
	// around the forecast release (HandWindow): back to back, within its
	// share of the fast budget (readBank). A 5 s hold is a third of the
	// poll interval, and at the next interval a handed seat waited about
	// half a second per handoff, a tenth of the hold
	// (docs/performance.md §17).
	HandDivisor = 100
	// MaxFastSlots bounds how many queue ranks poll fast, whatever
	// maxHolders is, so the organization's request rate stays bounded.
	MaxFastSlots = 4
	// TailCapFactor caps the tail's interval at TailCapFactor × base.
	TailCapFactor = 8
	// CooldownJitter spreads the wake-ups of waiters that all target the
	// same cooldown expiry (spec §3.5: at most 249 ms).
	CooldownJitter = 250 * time.Millisecond
	// minTailSpread is the reference's smallest poll jitter spread.
	minTailSpread = 250 * time.Millisecond
	// FastBudgetPerMinute and TailBudgetPerMinute bound the organization's
	// state reads (304s included: each still counts toward GitHub's
	// concurrency and points-per-minute secondary limits) whatever the
	// number of seats and waiters: the FastRanks waiters that could be
	// admitted next share FastBudgetPerMinute, every other waiter polls no
	// more often than once per Queued × 60 s / TailBudgetPerMinute.
	FastBudgetPerMinute = 300
	TailBudgetPerMinute = 200
	// MaxTailInterval caps a far waiter's interval, which otherwise grows
	// with its expected wait (Schedule.HoldEstimate): a seat handed to it
	// directly is noticed at most this late.
	MaxTailInterval = 30 * time.Minute
	// TailETAPercent is the share of a far waiter's expected time to the
	// fast ranks that it sleeps: its remaining wait shrinks geometrically,
	// so it polls about log(wait) times before it polls fast.
	TailETAPercent = 70
	// handOverdueSlowdown: past the lead of a short hold's forecast
	// release, the window interval grows by an eighth of the time overdue
	// (a release that lost its write to a join lands a second or two late).
	handOverdueSlowdown = 8
	// loggedTailSpreadDivisor: a far waiter pacing by logged holds jitters
	// by a sixth of its interval.
	loggedTailSpreadDivisor = 6
)

// harmonic is H(n) = 1 + 1/2 + … + 1/n.
func harmonic(n int) float64 {
	h := 0.0
	for i := 1; i <= n; i++ {
		h += 1 / float64(i)
	}
	return h
}

// FastRanks is how many admissible ranks poll fast: the waiters a release
// may hand seats to next (twice the seats, so a second seat freed within
// one poll interval also finds its next waiter polling fast).
func FastRanks(seats int) int { return 2 * max(seats, 1) }

// Schedule is the input of PollDelay.
type Schedule struct {
	// Base is poll-seconds as a duration (default 15 s).
	Base time.Duration
	// Unit is one poll-seconds unit (1 s; smaller in the compressed demo);
	// it is the floor of the fast interval, and the request budgets are
	// per 60 units (a minute at 1 s).
	Unit time.Duration
	// Rank is the caller's admissible rank: how many queued requests would
	// be admitted before it (0 = next). Negative means unknown (tail).
	Rank int
	// Seats is maxHolders of the current config.
	Seats int
	// UntilCooldown, when positive, is the time until the earliest future
	// cooldown expiry (quarantines and expired cooldowns never count).
	UntilCooldown time.Duration
	// Queued is the queue length (0: unknown, no rate floor).
	Queued int
	// Share is the lock's apiShare (lockstate.Config.Share): the read
	// budgets are FastBudgetPerMinute and TailBudgetPerMinute times Share.
	// 0 (or anything above 1) means 1.
	Share float64
	// OldestHold is how long the longest-held current holder has held its
	// seat (0: no holder, or unknown).
	OldestHold time.Duration
	// Burst reports a burst visible in the queue (burstFactor × Seats
	// entries that started within burstWindow of now, coArrivals).
	Burst bool
	// HoldEstimate, when positive, is how long a holder keeps its seat
	// (observed by this waiter); a far waiter's interval is at least half
	// TailETAPercent of its expected wait for the fast ranks, (Rank + 1 −
	// FastRanks) / Seats × HoldEstimate.
	HoldEstimate time.Duration
	// LoggedHold, when positive, is the typical hold the lock's releases
	// logged, each from its job's notice to its release (the median of
	// two or more, or a single one shorter than Base: loggedHold in
	// loop.go): unlike HoldEstimate it leaves out the
	// time a seat sat handed but unnoticed.
	LoggedHold time.Duration
	// Forecast reports that UntilRelease is set: the time until the release
	// that can hand a fast rank its seat, forecast from the holds this
	// waiter saw end (forecast.go); negative when that time has passed.
	// ReleaseMargin is how much earlier the release may come (from the
	// shortest hold seen, less twice its distance to the median and at
	// least a quarter of it: holdLog.estimate).
	Forecast      bool
	UntilRelease  time.Duration
	ReleaseMargin time.Duration
	// HandWindow reports that UntilHand is set, from the holds the lock's
	// releases logged, when they are short (handwindow.go): for a rank
	// below Seats, the time until the earliest the release that hands it
	// a seat can land; for a fast rank at or past Seats, the time until
	// the release that brings it below Seats has surely landed. Negative
	// when that time has passed. HandLead is how long after that a
	// release may still land at the logged pace (the holder's notice, its
	// release's read and its write): a rank below Seats polls back to back
	// through it.
	HandWindow bool
	UntilHand  time.Duration
	HandLead   time.Duration
	// PaceSeen reports that this waiter saw holds end (HoldEstimate then
	// comes from them, not from OldestHold alone).
	PaceSeen bool
}

// PollDelay returns the wait before the next poll. r is a jitter draw in
// [0,1).
//
//   - Rank < FastRanks(Seats): fast = max(Unit, Base/FastDivisor,
//     (Rank+1) × H(n) × 60 s / FastBudgetPerMinute), n = min(FastRanks,
//     Queued) and H(n) = 1 + 1/2 + … + 1/n (rank r's share of the fast
//     budget is 1/(r+1) of the head's), plus up to a third of it in jitter
//     (1.5–2.0 s by default up to 4 seats). A rank r below Seats, while
//     every holder has held for less than MinForecastHold × Base
//     (OldestHold) or no release is forecast, and no Burst shows, polls
//     at the next interval max(3/4 Unit, Base/NextDivisor) × (3 + r) / 3
//     instead, when that is shorter, within the same budget, plus up to a
//     quarter of it (rank 0 0.75–0.94 s, rank 1 1.0–1.25 s by default);
//     with a Forecast (and no Burst) the next waiter's fast interval below
//     is rank 1's of those. A fast rank at or past Seats, which needs a
//     holder admitted after now to release first, waits at least
//     (Rank − Seats + 2) × max(Unit, Base/FastDivisor), at most Base.
//   - Otherwise the tail backs off in proportion to its rank: Base at the
//     first tail rank, Base / min(Seats, MaxFastSlots) more per further
//     rank, capped at TailCapFactor × Base, and at least
//     Queued × 60 s / TailBudgetPerMinute and TailETAPercent of its expected
//     wait for the fast ranks (capped at MaxTailInterval); plus up to a third (at least 250 ms) of jitter.
//   - A fast rank with a Forecast sleeps until the earliest the release
//     may come (UntilRelease − ReleaseMargin), at most Base, plus up to a
//     third of the window interval w = max(Unit/2, Base/WindowDivisor, its
//     share of the fast budget); polls at the fast interval from there
//     until w before the forecast release; then every w plus a quarter of
//     the time it is overdue, at most the fast interval, plus up to a third
//     of that.
//   - A fast rank with a HandWindow (short logged holds; Burst or not)
//     sleeps until UntilHand, at most Base; a rank below Seats then polls
//     back to back (every Unit/HandDivisor plus its read's round trip)
//     through HandLead, and after it every Unit/HandDivisor plus an eighth
//     of the time it is overdue, at most its interval above; a rank at or
//     past Seats polls every Unit plus an eighth of the time it is
//     overdue, at most its interval above. The caller bounds the back-to-
//     back reads by the rank's share of the fast budget (readBank).
//   - A tail rank that has seen no hold end, with none logged, polls at
//     most at TailETAPercent of its expected wait as if the holds lasted
//     OldestHold (within the tail budget): a lock's first holds may be
//     short. With logged holds shorter than Base its jitter is a sixth of
//     its interval, not a third.
//   - The tail budget is shared by rank like the fast one: the k-th tail
//     rank of n polls at least every k × H(n) × 60 s / TailBudgetPerMinute
//     (Queued × 60 s / TailBudgetPerMinute when its rank is unknown).
//   - If a cooldown expires sooner than that, the wait is the time to that
//     expiry plus up to 249 ms of jitter.
func PollDelay(s Schedule, r float64) time.Duration {
	if r < 0 || r >= 1 {
		r = 0
	}
	unit, share := s.unit(), s.share()
	base := max(s.Base, unit)
	seats := max(s.Seats, 1)
	fastSlots := min(seats, MaxFastSlots)
	fastRanks := FastRanks(seats)
	var d, spread time.Duration
	if s.Rank >= 0 && s.Rank < fastRanks {
		d = max(unit, base/FastDivisor)
		// The waiters a release may hand a seat to now (rank < Seats) of
		// holds younger than MinForecastHold × base or of holds with no
		// forecast, and the next waiter around a forecast release, poll at
		// the next interval, one third of it slower per rank (never slower
		// than the fast interval).
		next := s.Rank < seats && !s.Burst && s.OldestHold > 0 && (s.OldestHold < MinForecastHold*base || !s.Forecast)
		switch {
		case next:
			d = min(d, max(unit*3/4, base/NextDivisor)*time.Duration(3+s.Rank)/3)
		case s.Rank == 0 && !s.Burst && s.Forecast:
			d = min(d, max(unit*3/4, base/NextDivisor)*4/3)
		}
		budget := fastShare(s)
		d = max(d, budget)
		switch {
		case s.HandWindow && s.Rank < seats:
			d, spread = handDelay(s.UntilHand, s.HandLead, unit/HandDivisor, d, base)
		case s.HandWindow:
			d, spread = handDelay(s.UntilHand, 0, unit, pastSeatsInterval(s.Rank, seats, d, unit, base), base)
		case s.Forecast:
			d, spread = forecastDelay(s.UntilRelease, s.ReleaseMargin, max(unit/2, base/WindowDivisor, budget), d, base)
		case next:
			// A few waiters poll at these ranks: their jitter need not
			// spread a crowd, and all of it is notice.
			spread = d / 4
		case s.Rank >= seats:
			// Rank r needs r + 1 releases before a seat can be handed to
			// it, and only Seats holders are there to release now: the
			// others must first be admitted and then release, which takes
			// at least one hold. Such a rank polls one fast interval
			// slower per rank beyond the seats (3 s, 4.5 s, … at the
			// defaults, at most Base), so it is still polling fast when a
			// rank ahead of it is handed a seat.
			d = pastSeatsInterval(s.Rank, seats, d, unit, base)
			fallthrough
		default:
			spread = d / 3
		}
	} else {
		// The first tail rank polls at Base, each further one a
		// fastSlots-th of Base later.
		rank := fastSlots
		if s.Rank >= 0 {
			rank = s.Rank - fastRanks + fastSlots
		}
		d = min(time.Duration(int64(base)*int64(rank)/int64(fastSlots)), TailCapFactor*base)
		// The tail budget: each far waiter polls at most once per its
		// share. Like the fast budget it is shared by rank (the k-th of n
		// tail ranks gets a 1/k share, harmonic weights), so the waiters
		// next to reach the fast ranks poll soonest and the shares still
		// sum to TailBudgetPerMinute: an equal share made the first tail
		// rank of a 40-job queue sleep 12 s on 5 s holds.
		budget := time.Duration(float64(s.Queued) * 60 * float64(unit) / (TailBudgetPerMinute * share))
		if n := s.Queued - fastRanks; s.Rank >= fastRanks && n > 0 {
			budget = rankShare(min(s.Rank-fastRanks+1, n), n, unit, TailBudgetPerMinute, share)
		}
		d = max(d, budget)
		if s.HoldEstimate > 0 && s.Rank >= 0 {
			// Most of the expected time until it reaches the fast ranks:
			// it moves up one rank per admission, one every HoldEstimate
			// / Seats, and the fast ranks are FastRanks − Seats admissions
			// ahead of its own turn, so a seat is handed to it while it
			// already polls fast.
			// With holds logged, no slower than they say (plus a unit
			// per admission for the release and its notice):
			// HoldEstimate falls back to the oldest holder's age before
			// this waiter saw holds end, and one slow release (a write
			// that lost races to a burst's joins) made a 30 s-hold queue
			// look 40 s a turn and a far waiter sleep 8 minutes through
			// its seat (bench burst-40x2).
			hold := s.HoldEstimate
			if s.LoggedHold > 0 {
				hold = min(hold, s.LoggedHold+unit)
			}
			turns := int64(s.Rank + 1 - fastRanks)
			eta := time.Duration(turns * int64(hold) / int64(seats))
			d = max(d, min(eta*TailETAPercent/100, MaxTailInterval))
		}
		if !s.PaceSeen && s.LoggedHold <= 0 && s.OldestHold > 0 && s.Rank >= 0 {
			// Nothing says how long holds last (a lock's first burst):
			// HoldEstimate is then at least Base, and the rank-based
			// interval assumes a poll interval per admission, while the
			// first holds may be seconds long. The holders' age bounds a
			// hold from below only; sleep TailETAPercent of the wait at
			// that pace, so the sleeps grow with the holds until one is
			// seen to end or is logged.
			turns := time.Duration(s.Rank + 1 - fastRanks)
			d = max(unit, budget, min(d, turns*s.OldestHold/time.Duration(seats)*TailETAPercent/100))
		}
		spread = max(minTailSpread, d/3)
		if s.LoggedHold > 0 && s.LoggedHold < base && s.Rank >= 0 {
			// Holds shorter than the poll interval, as the releases
			// logged them: the queue moves faster than the rank-based
			// interval assumes (one poll interval per seat per
			// admission), and HoldEstimate, which counts the time seats
			// sat unnoticed, would lengthen the sleeps that leave them
			// unnoticed (docs/performance.md §15). Sleep TailETAPercent of
			// the time to the fast ranks at the logged pace, one unit per
			// admission added for the release and its notice.
			turns := time.Duration(s.Rank + 1 - fastRanks)
			d = max(unit, budget, min(turns*(s.LoggedHold+unit)/time.Duration(seats)*TailETAPercent/100, MaxTailInterval))
			// A third in jitter would wake it at up to 93% of the
			// expected wait; at these paces that is past its turn.
			spread = max(minTailSpread, d/loggedTailSpreadDivisor)
		}
	}
	delay := d + time.Duration(r*float64(spread))
	if s.UntilCooldown > 0 && s.UntilCooldown < delay {
		j := time.Duration(r * float64(CooldownJitter))
		if j >= CooldownJitter {
			j = CooldownJitter - time.Millisecond
		}
		delay = s.UntilCooldown + j
	}
	return delay
}

// pastSeatsInterval is the wait of a fast rank at or past the seats, whose
// fast interval is d: one fast interval slower per rank beyond the seats,
// at most base.
func pastSeatsInterval(rank, seats int, d, unit, base time.Duration) time.Duration {
	return max(d, min(base, max(unit, base/FastDivisor)*time.Duration(rank-seats+2)))
}

// fastShare is how often a fast rank may read within its share of the
// fast budget (0 when the queue length is unknown or the rank is not fast).
// The fast budget is shared by rank: rank r gets a 1/(r+1) share (harmonic
// weights), so the waiter a release hands the next seat to polls fastest
// and rank r, which needs r more seats freed first, r+1 times slower. The
// shares sum to FastBudgetPerMinute whatever the number of fast ranks.
func fastShare(s Schedule) time.Duration {
	fastRanks := FastRanks(s.Seats)
	if s.Queued <= 0 || s.Rank < 0 || s.Rank >= fastRanks {
		return 0
	}
	n := min(fastRanks, s.Queued)
	return rankShare(min(s.Rank, n-1)+1, n, s.unit(), FastBudgetPerMinute, s.share())
}

// rankShare is how often the k-th of n waiters sharing perMinute reads a
// minute (60 units) by rank may read: the k-th gets a 1/k share (harmonic
// weights), k × H(n) × 60 units / (perMinute × share), and the shares sum
// to perMinute × share.
func rankShare(k, n int, unit time.Duration, perMinute, share float64) time.Duration {
	return time.Duration(float64(k) * harmonic(n) * 60 * float64(unit) / (perMinute * share))
}

// unit is Unit, or a second when unset.
func (s Schedule) unit() time.Duration {
	if s.Unit <= 0 {
		return time.Second
	}
	return s.Unit
}

// share is Share, or the whole budget when unset or above 1.
func (s Schedule) share() float64 {
	if s.Share <= 0 || s.Share > 1 {
		return 1
	}
	return s.Share
}

// handDelay is a fast rank's wait around a short hold's release due in
// until (negative: overdue; HandWindow): asleep until it (at most base);
// then every w through lead, and every w plus an eighth of the time overdue
// past lead, at most interval (the rank's wait without the window). spread
// is the jitter's range.
func handDelay(until, lead, w, interval, base time.Duration) (d, spread time.Duration) {
	if until > 0 {
		d = min(until, base)
		return d, min(w, d/10)
	}
	d = min(w+max(0, -until-lead)/handOverdueSlowdown, max(w, interval))
	return d, d / 4
}

// forecastDelay is a fast rank's wait around a forecast release due in
// until (negative: overdue) that may come margin earlier: asleep until the
// earliest it may come (at most base); polling at the fast interval from
// there until w before it; then every w plus a quarter of the time overdue,
// at most fast. spread is the jitter's range.
func forecastDelay(until, margin, w, fast, base time.Duration) (d, spread time.Duration) {
	w = min(w, fast)
	switch {
	case until-margin > fast:
		d = min(until-margin, base)
		return d, min(w/3, d/3)
	case until > 2*w:
		d = max(w, min(fast, until-w))
		return d, min(w/3, d/3)
	}
	d = min(w+max(0, -until)/overdueSlowdown, fast)
	return d, d / 3
}
