package acquire

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// Burst handling: how a job joins a queue that many jobs join at once
// (docs/performance.md "Bursts"). Every join is a compare-and-swap on one
// document and a content-creating request, which GitHub limits to 80 per
// minute and 500 per hour per writer App installation; joins sent in the
// same second collide and all but one are wasted. Because a job's entry is
// inserted by its arrival snapshot (lockstate.AcquireRequest.Arrival), a
// join may be spread out without costing queue position, as long as it
// lands before the job's turn.
const (
	// JoinSpacing is the spacing of joins the spread aims at: one join
	// per JoinSpacing organization-wide keeps the read→write window of a
	// join (about 0.75 s) mostly free of other joins, and the content
	// writes of a burst well under 80 per minute.
	JoinSpacing = 2 * time.Second
	// burstWindow is how far back queuedAt counts an entry as a co-arrival.
	burstWindow = time.Minute
	// burstFactor: a burst is at least burstFactor × seats co-arrivals.
	burstFactor = 4
	// MaxJoinSpread caps the spread of one join.
	MaxJoinSpread = 3 * time.Minute
	// minConflictWindow is the narrowest window of the wait after a lost
	// join (conflictDelay), however near its turn the job is: 1-2 s, the
	// window of a first lost join.
	minConflictWindow = 2 * acquireConflictDelay
)

// coArrivals counts the queue entries whose queuedAt (their acquire's start,
// on their runner's clock: a skewed clock only misjudges the heuristic,
// never safety) lies within burstWindow of now.
func coArrivals(s *lockstate.State, now time.Time) int {
	n := 0
	for _, e := range s.Queue {
		if t, ok := lockstate.ParseTime(e.QueuedAt); ok && now.Sub(t).Abs() <= burstWindow {
			n++
		}
	}
	return n
}

// burst counts the co-arrivals in s and reports whether they show a burst:
// at least burstFactor × seats of them.
func (q *acquirer) burst(s *lockstate.State) (n int, shows bool) {
	n = coArrivals(s, q.now())
	return n, n >= burstFactor*max(q.cfg.MaxHolders, 1)
}

// joinWindow is the window over which a job that will only queue spreads
// its first join: JoinSpacing per co-arrival once the queue shows a burst
// (burstFactor × seats co-arrivals), else 0 (join at once). It never delays
// the join past half the job's expected wait for its turn.
func (q *acquirer) joinWindow(s *lockstate.State) time.Duration {
	n, shows := q.burst(s)
	if !shows {
		return 0
	}
	return min(q.joinSpacing()*time.Duration(n), MaxJoinSpread, q.joinETA(s)/2)
}

// conflictDelay is the wait after a join that lost its compare-and-swap
// race conflictStreak times in a row: an exponentially growing window
// (2 s, 4 s, ... up to MaxConflictBackoff: a job that keeps losing is the
// evidence of many joining at once) widened to the burst's join
// window, drawn from its upper half. Its arrival insertion keeps its place
// however long it waits, as long as it joins before its turn, so the
// window is never more than half the job's expected wait for its turn
// (joinETA), nor less than minConflictWindow.
//
// The bound applies to the exponential part too. Unbounded, a job near
// the front that lost six joins in a row to a burst's later arrivals
// slept 37 s after its sixth: the seat its arrival entitled it to was
// freed 5 s into that sleep and sat empty for 33 s (bench burst-20,
// 20 jobs 0.2 s apart on 2 seats with 5 s holds; docs/performance.md
// §25). A job far back still spreads its joins as before.
func (q *acquirer) conflictDelay(s *lockstate.State) time.Duration {
	window := min(acquireConflictDelay<<min(q.conflictStreak, 8), MaxConflictBackoff)
	if n, shows := q.burst(s); shows {
		window = max(window, min(q.joinSpacing()*time.Duration(n), MaxJoinSpread))
	}
	window = min(window, max(minConflictWindow, q.joinETA(s)/2))
	return window/2 + time.Duration(q.d.Jitter()*float64(window/2))
}

// joinSpacing is JoinSpacing over the lock's apiShare
// (lockstate.Config.Share): a lock whose jobs may use a quarter of the
// writer App's limits spaces its joins four times wider.
func (q *acquirer) joinSpacing() time.Duration {
	return time.Duration(float64(JoinSpacing) / q.cfg.Share())
}

// joinETA estimates how long until a job that joins now gets its turn: the
// entries that will be ahead of it (those of its arrival snapshot still
// queued, and those that started their acquire no later than it did) over
// the seats, times the hold estimate.
func (q *acquirer) joinETA(s *lockstate.State) time.Duration {
	ahead := 0
	for _, e := range s.Queue {
		t, ok := lockstate.ParseTime(e.QueuedAt)
		if q.arrival == nil || q.arrival.Queued[e.HolderID] || (ok && !t.After(q.id.QueuedAt)) {
			ahead++
		}
	}
	turns := ahead + 1 - max(lockstate.FreeSlots(s, q.cfg), 0)
	if turns <= 0 {
		return 0
	}
	return time.Duration(int64(turns) * int64(q.holdEstimate(s)) / int64(max(q.cfg.MaxHolders, 1)))
}

// observe paces the hold estimate by what this waiter saw: `moves` of the
// entries it saw queued ahead of it (in any state it read or wrote since
// the first that queued it) have left the queue since, so the seats turned
// over about that often in that time: one hold per seat every Seats ×
// elapsed / (moves + 1), one move more than seen so a pace measured from
// few moves errs short (a far waiter then wakes early, never late).
//
// Departures are counted, not the fall of its rank: in a burst, earlier
// arrivals that join late are inserted ahead of it (arrival insertion), so
// its rank may rise while seats turn over. Counting rank moves, a rank-10
// waiter that saw its rank go 10 → 12 → 11 over 9 minutes of about
// 4.7-minute holds on 2 seats took the holds to be 9.3 minutes long, slept
// 26 minutes and noticed a seat handed to it 49 s late (bench `burst`,
// seed 20261500). The pace is averaged over the whole wait, not the last
// move alone: one poll gap minutes long in which one admission passed
// would read as half the pace it was (a rank-12 waiter then slept 37
// minutes through a seat handed to it; seed 20261402). Holders' own
// timestamps cannot tell how many holds passed between two polls far
// apart.
func (q *acquirer) observe(s *lockstate.State) {
	now := q.now()
	pos := lockstate.QueuePosition(s, q.id.HolderID)
	if pos == 0 {
		return
	}
	ahead := s.Queue[:pos-1]
	if q.paceSince.IsZero() || q.secondaryWarned.After(q.paceSince) {
		// First queued, or a secondary limit held every write of the App
		// back since the measurement began: releases did not land while
		// it lasted, so departures counted across it would read as slow
		// holds. Measure afresh from here (the pace measured before it
		// stands).
		q.paceSince, q.departed, q.ahead = now, 0, make(map[string]bool, len(ahead))
		for _, e := range ahead {
			q.ahead[e.HolderID] = true
		}
		return
	}
	present := make(map[string]bool, len(ahead))
	for _, e := range ahead {
		present[e.HolderID] = true
	}
	gone := 0
	for id := range q.ahead {
		if !present[id] {
			gone++
			delete(q.ahead, id)
		}
	}
	for id := range present {
		q.ahead[id] = true
	}
	if gone == 0 {
		return
	}
	q.departed += gone
	q.observedHold = time.Duration(int64(now.Sub(q.paceSince)) * int64(max(q.cfg.MaxHolders, 1)) / int64(q.departed+1))
	if q.departed >= paceMoves {
		// Measure the next pace afresh, so a queue that speeds up
		// (shorter holds) is not paced by its slow start for long.
		q.paceSince, q.departed = now, 0
	}
}

// paceMoves is how many departures one pace measurement spans at most.
const paceMoves = 8

// stalePaceNum / stalePaceDen: the measured pace gives way to the oldest
// holder's age when the age is under this share of it (holdEstimate).
const stalePaceNum, stalePaceDen = 2, 3

// holdEstimate is how long a seat is held: the pace observe measured or,
// before it measured one, the age of the oldest current holder (a lower
// bound), at least poll-seconds. While every seat is held and that age is
// under two thirds of the measured pace, the age replaces the pace: every
// seat was taken within it, after a release each (or new), so the seats
// turn over at least that fast now, whatever a pace measured over a slower
// stretch says (releases that a secondary limit held back, late joins
// inserted ahead). Holders admitted together make it short, which wakes
// the waiter early: that costs reads, never notice. (A cap of 1.5 times the
// age, what evenly spread admissions on 2 seats give, still slept through
// turns in bench `burst-40x2`: after a limit's stop both seats are taken
// within seconds. Applied at any ratio, the age cut `burst`'s 4-6 minute
// holds short and cost 0.6-0.9 charged requests per job.) It only paces
// polling; safety never depends on it.
func (q *acquirer) holdEstimate(s *lockstate.State) time.Duration {
	now := q.now()
	var oldest time.Duration
	for _, h := range s.Holders {
		if t, ok := lockstate.ParseTime(h.AcquiredAt); ok {
			if age := now.Sub(t); age > oldest && age < 24*time.Hour {
				oldest = age
			}
		}
	}
	if q.observedHold > 0 {
		est := q.observedHold
		if seats := max(q.cfg.MaxHolders, 1); len(s.Holders) >= seats && oldest > 0 && oldest*stalePaceDen < est*stalePaceNum {
			est = oldest
		}
		return max(q.s.Poll, est)
	}
	return max(q.s.Poll, oldest)
}

// waitSecondary waits out a secondary rate limit that ended a call unsent
// (ghclient holds every request of the token back until it ends), inside
// timeout-minutes: the loop then decides again on a fresh read. The wait is
// reported once per limit.
func (q *acquirer) waitSecondary(ctx context.Context, err error) error {
	var until time.Time
	var e *ghclient.Error
	if errors.As(err, &e) {
		until = e.SecondaryUntil
	}
	if until.IsZero() {
		until = q.now().Add(ghclient.SecondaryMinWait)
	}
	if until.After(q.secondaryWarned) {
		q.secondaryWarned = until
		q.a.Warning(fmt.Sprintf("GitHub's secondary rate limit holds back requests for %s until %s; this job keeps its place and waits (timeout-minutes still applies).",
			q.s.Target.Lock, until.UTC().Format(time.RFC3339)))
	}
	// Every job the limit held back is released at the same instant: spread
	// their next requests over secondaryJitter, and a join still to be
	// written wider (pendingJoinSpread).
	spread := secondaryJitter
	if q.last != nil && lockstate.QueuePosition(q.last, q.id.HolderID) == 0 && lockstate.HolderIndex(q.last, q.id.HolderID) < 0 {
		spread = max(spread, min(time.Duration(float64(pendingJoinSpread)/q.cfg.Share()), MaxJoinSpread))
	}
	return q.sleep(ctx, max(until.Sub(q.now()), time.Second)+time.Duration(q.d.Jitter()*float64(spread)))
}

// secondaryJitter spreads the requests that follow a secondary-limit wait.
const secondaryJitter = 15 * time.Second

// pendingJoinSpread spreads the joins still to be written after a
// secondary-limit wait over two minutes, over the lock's apiShare (at most
// MaxJoinSpread), so the releases the wait held back land first.
const pendingJoinSpread = 2 * time.Minute
