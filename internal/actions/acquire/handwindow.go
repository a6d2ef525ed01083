package acquire

import (
	"slices"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// The hand window (docs/performance.md §17). Holds shorter than
// MinForecastHold × poll-seconds are not forecast from what a waiter saw
// (forecast.go), so the waiter a release would hand a seat polled at the
// next interval, 0.75–0.94 s plus a read, through the whole hold, and the
// seat sat handed for half of that on average: on 5 s holds a tenth of the
// seat time. The releases log how long their jobs used their seats
// (lockstate.RecentHold, from the job's notice), and each holder's
// acquiredAt is when its seat was handed, so the earliest its release can
// land is acquiredAt plus the shortest logged hold, less twice the holds'
// spread (a quarter of it while one is logged), plus what the release
// needs besides the hold: the holder's read
// that notices the seat, its release's read and its write, three round
// trips at least (handLeadReads). The waiter sleeps until then and reads
// back to back through that lead, then slower the later the release is
// (handDelay in poll.go). Its fewer reads during the hold pay for the
// faster ones around the release; readBank keeps the faster ones within
// its share of the fast read budget. The window only paces polling: no
// admission depends on it, and a release that comes earlier than the
// window is noticed at the next read, at most poll-seconds later.
const (
	// handLeadReads is how many of this waiter's read round trips a
	// release needs besides its hold.
	handLeadReads = 3
	// rttSamples is how many recent reads the round trip is the shortest
	// of (a lagging replica or a slow answer only lengthens one).
	rttSamples = 8
	// readBankReads bounds the reads a waiter may make faster than its
	// share of the fast budget in one window.
	readBankReads = 8
)

// handWindow fills sch's hand window from s at now: for a fast rank, with
// every seat held, a hold logged, the median shorter than
// MinForecastHold × poll-seconds and a measured round trip. A rank below
// the seats waits for the (Rank+1)-th release; a fast rank past them for
// the release that brings it below them, plus the lead, after which it
// surely landed at the logged pace.
func (q *acquirer) handWindow(s *lockstate.State, sch *Schedule, now time.Time) {
	seats := max(sch.Seats, 1)
	if sch.Rank < 0 || sch.Rank >= FastRanks(seats) || lockstate.FreeSlots(s, q.cfg) > 0 || q.rtt.min() <= 0 {
		return
	}
	typical, shortest, n := s.HoldRange(now)
	if n == 0 || typical >= MinForecastHold*q.s.Poll {
		return
	}
	early := shortest - 2*(typical-shortest)
	if n == 1 {
		// One hold says nothing of their spread: from three quarters of
		// it, as the long-hold forecast does at the least (forecast.go).
		early = shortest - shortest/minMarginDivisor
	}
	if early <= 0 {
		// Holds too unalike to say when the next ends.
		return
	}
	lead := handLeadReads * q.rtt.min()
	if sch.Rank < seats {
		if at, ok := forecastRelease(s.Holders, early+lead, sch.Rank, now); ok {
			sch.HandWindow, sch.UntilHand, sch.HandLead = true, at.Sub(now), lead
		}
		return
	}
	if at, ok := forecastRelease(s.Holders, early+lead, sch.Rank-seats, now); ok {
		sch.HandWindow, sch.UntilHand = true, at.Sub(now)+lead
	}
}

// inHandWindow reports a schedule whose rank below the seats is in its
// window: a stale read then is read again at once (staleReadWait).
func inHandWindow(sch Schedule) bool {
	return sch.HandWindow && sch.Rank >= 0 && sch.Rank < max(sch.Seats, 1) && sch.UntilHand <= 0
}

// rttLog keeps this run's recent read round trips.
type rttLog struct{ recent []time.Duration }

// note records one successful read's round trip.
func (l *rttLog) note(d time.Duration) {
	if d <= 0 {
		return
	}
	l.recent = append(l.recent, d)
	if n := len(l.recent); n > rttSamples {
		l.recent = slices.Delete(l.recent, 0, n-rttSamples)
	}
}

// min is the shortest recent round trip, 0 before any.
func (l *rttLog) min() time.Duration {
	if len(l.recent) == 0 {
		return 0
	}
	return slices.Min(l.recent)
}

// readBank is a token bucket over the reads a waiter makes sooner than its
// share of the fast read budget allows (every floor): one accrues per
// floor, up to readBankReads, and each such read spends one. A waiter that
// slept through a hold has banked the reads it did not make; one whose
// window finds the bank empty polls at its share.
type readBank struct {
	tokens float64
	at     time.Time
}

// spend returns the wait before the next read: d when it is not sooner
// than floor or a banked read pays for it, floor otherwise.
func (b *readBank) spend(now time.Time, d, floor time.Duration) time.Duration {
	if floor <= 0 {
		return d
	}
	if b.at.IsZero() {
		b.tokens = readBankReads
	} else if el := now.Sub(b.at); el > 0 {
		b.tokens = min(readBankReads, b.tokens+float64(el)/float64(floor))
	}
	b.at = now
	if d >= floor {
		return d
	}
	if b.tokens >= 1 {
		b.tokens--
		return d
	}
	return floor
}
