package acquire

import (
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// staleReadDelay is the wait before reading again after a read older than
// the last one (staleRead).
const staleReadDelay = time.Second

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
// after about staleReadDelay, at most maxStaleSkips times in a row: a writer
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
