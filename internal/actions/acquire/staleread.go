package acquire

import (
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// staleReadDelay is the wait before reading again after a read older than
// the last one (staleRead), from the second such read in a row.
const staleReadDelay = time.Second

// staleRereadDelay is the wait before reading again after the first stale
// read of a run a seat may reach on the next version (staleReadWait).
const staleRereadDelay = 100 * time.Millisecond

// handStaleRereadDelay is that wait in a hand window (handwindow.go), where
// the waiter already reads back to back (10 ms plus its round trip at the
// production poll unit): a stale read there is read again as soon as any
// other read of the window would be.
const handStaleRereadDelay = 10 * time.Millisecond

// maxStaleSkips bounds the consecutive reads staleRead skips.
const maxStaleSkips = 3

// staleRead reports (and counts) a read whose updatedAt is older than that
// of the last state this run decided on: a replica lagging behind the
// versions this run already saw (docs/emulator.md "Replica lag") that the
// store cannot recognise, because it never saw that version's SHA. Deciding
// on it goes back in time: a join for an entry already in the state, or an
// admission for a seat already handed to someone else, is a write certain to
// lose its compare-and-swap, after which the run sleeps as if its rank were
// unknown (the tail's interval) while a release may be handing it a seat
// (docs/performance.md §10). The read is skipped and the state read again
// after staleReadWait, at most maxStaleSkips times in a row: a writer
// whose clock runs behind (updatedAt is its clock) only delays the decision
// by a few seconds. Safety never depends on it: a skipped read decides
// nothing.
func (q *acquirer) staleRead(s *lockstate.State) bool {
	if q.last == nil || s == nil || q.staleSkips >= maxStaleSkips {
		q.staleSkips = 0
		return false
	}
	prev, ok1 := lockstate.ParseTime(q.last.UpdatedAt)
	cur, ok2 := lockstate.ParseTime(s.UpdatedAt)
	if !ok1 || !ok2 || !cur.Before(prev) {
		q.staleSkips = 0
		return false
	}
	q.staleSkips++
	return true
}

// staleReadWait is the wait before reading again after a stale read. A
// lagging replica answers some reads, not all (docs/emulator.md "Replica
// lag"), so the first read again comes after staleRereadDelay (100-200 ms)
// for a run the next version may admit or hand a seat: one not yet queued,
// or queued at an admissible rank below the seats. In bench handoff-mixed
// (seed 20261231) a rank-0 waiter's read again a second after a stale read
// was lagged too, and the next served the version before a reference
// release, which no read can tell from the newest: the seat that release
// freed waited 4.5 s for its admission. Later reads in a row, and every
// read again of a waiter further back, wait staleReadDelay, so a replica
// that lags for a while is outwaited over maxStaleSkips reads of about
// 2.3 s before the run decides on what it reads, except in a hand window
// (handwindow.go), where the release is due and every stale read in a row is
// read again at handStaleRereadDelay (10-20 ms): the 100-200 ms of
// staleRereadDelay there left a seat handed during the wait unnoticed
// that long, and about half the unnoticed seat time of bench burst-20 and
// burst-40x1 (5 s holds) followed a stale read (docs/performance.md §26).
// A far waiter gains
// nothing from reading again sooner; nor may it wait its whole poll
// interval on the newest state it saw, as if the stale read were no news:
// versions pass in that interval, and its rank with them.
func (q *acquirer) staleReadWait() time.Duration {
	near := q.last == nil || lockstate.QueuePosition(q.last, q.id.HolderID) == 0 ||
		admissibleRank(q.last, q.cfg, q.id.HolderID) < max(q.cfg.MaxHolders, 1)
	if near && q.handing {
		return q.d.Jittered(handStaleRereadDelay, handStaleRereadDelay)
	}
	if near && q.staleSkips <= 1 {
		return q.d.Jittered(staleRereadDelay, staleRereadDelay)
	}
	return q.d.Jittered(staleReadDelay, staleReadDelay/3)
}
