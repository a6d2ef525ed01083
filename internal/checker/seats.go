package checker

import (
	"slices"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// seatMode reports whether a version pair follows the issue-25 admission
// rules (named seats, seat labels, priority classes; schema 6): the
// config names seats, or either state records a seat, a label set or a
// class. The anonymous FIFO checks then give way to the seat checks.
func seatMode(in Input, prev, cur *snapshot) bool {
	if cur.st.SchemaVersion < lockstate.FencedSchemaVersion {
		return false
	}
	if len(in.Seats) > 0 {
		return true
	}
	for _, st := range []*lockstate.State{prev.st, cur.st} {
		for _, h := range st.Holders {
			if h.Seat != "" || h.Labels != "" || h.Priority != 0 {
				return true
			}
		}
		for _, q := range st.Queue {
			if q.Labels != "" || q.Priority != 0 {
				return true
			}
		}
	}
	return false
}

// seatUsable reports whether waiter w could have taken seat: with the
// config's seats, the seat carries all of w's labels; with anonymous
// seats, w asks for no labels.
func (x *extended) seatUsable(w lockstate.Entry, seat string) bool {
	if len(x.in.Seats) == 0 {
		return w.Labels == ""
	}
	i := slices.IndexFunc(x.in.Seats, func(s lockstate.SeatConfig) bool { return s.Name == seat })
	return i >= 0 && x.in.Seats[i].Carries(w.LabelList())
}

// seatLeft reports whether cur leaves a seat w could take: a configured
// seat no holder or reservation records that carries w's labels, or
// (anonymous seats) a free slot.
func (x *extended) seatLeft(cur *snapshot, w lockstate.Entry) bool {
	if len(x.in.Seats) == 0 {
		return w.Labels == "" && x.in.MaxHolders-len(cur.st.Holders)-len(cur.st.Reservations) > 0
	}
	used := map[string]bool{}
	for _, h := range cur.st.Holders {
		used[h.Seat] = true
	}
	for _, r := range cur.st.Reservations {
		used[r.Seat] = true
	}
	for _, s := range x.in.Seats {
		if !used[s.Name] && s.Carries(w.LabelList()) {
			return true
		}
	}
	return false
}

// seats checks every admission of a seat-mode version pair (issue 25):
//   - the seat: a configured seat carrying all the holder's labels (with
//     Input.Seats), and never a seat another holder or reservation records
//     (Decode refuses such a state, counted here as a seat violation);
//   - bounded overtaking, whatever the class: an admission passes an
//     earlier waiter still queued that could have used its seat, unless a
//     seat is left for that waiter (it is polling later) or it reclaims
//     its own quarantine; no waiter is passed more than MaxOvertakes times;
//   - priority order: no waiter of a higher class that could have used the
//     seat, free to run (first on its runner, runner not busy) and not held
//     back by a barrier queued before it (an entry overtaken MaxOvertakes
//     times that could use the seat, the admitted one included), is left
//     without a seat.
//
// The overtaking and priority checks need the bound (CheckOvertakes).
func (x *extended) seats(i int, v Version, prev, cur *snapshot) {
	x.startBoundAtUpgrade(prev, cur)
	// A waiter's count ends with its queue entry (admitted, released or
	// removed): a later entry of the same holder id (a rerun joining
	// again) starts from 0, as its overtakes field does.
	for id := range x.passed {
		if _, still := cur.queued[id]; !still {
			delete(x.passed, id)
		}
	}
	busy := map[string]bool{}
	for _, h := range prev.st.Holders {
		addKeys(busy, entryKeys(h.Entry))
	}
	kept := map[string]bool{}
	for _, r := range cur.st.Reservations {
		kept[r.ReservationID] = true
	}
	for _, r := range prev.st.Reservations {
		// A cooldown this write pruned (it had expired) no longer blocks
		// its runner: the admission scan saw the runner free.
		if kept[r.ReservationID] {
			addKeys(busy, resKeys(r))
		}
	}
	for _, h := range cur.st.Holders {
		if _, was := prev.holders[h.HolderID]; was {
			continue
		}
		if len(x.in.Seats) > 0 {
			k := slices.IndexFunc(x.in.Seats, func(s lockstate.SeatConfig) bool { return s.Name == h.Seat })
			switch {
			case k < 0:
				x.rep.SeatViolations++
				x.violate("version %d (%s): %s admitted to seat %q, which the config does not name", i, v.Message, h.HolderID, h.Seat)
			case !x.in.Seats[k].Carries(h.LabelList()):
				x.rep.SeatViolations++
				x.violate("version %d (%s): %s (labels %s) admitted to seat %s, which carries %v", i, v.Message, h.HolderID, h.Labels, h.Seat, x.in.Seats[k].Labels)
			}
		}
		if reclaimed(prev, cur, h.Entry) || !x.in.CheckOvertakes {
			continue
		}
		pos, wasQueued := prev.queued[h.HolderID]
		queue := prev.st.Queue
		if !wasQueued {
			pos = len(queue)
			queue = append(slices.Clone(queue), h.Entry)
		}
		first := map[string]bool{}
		for j, w := range queue {
			wk := entryKeys(w)
			isFirst := !anyKey(first, wk)
			addKeys(first, wk)
			if j == pos || !x.seatUsable(w, h.Seat) {
				continue
			}
			if _, still := cur.queued[w.HolderID]; !still {
				continue
			}
			free := isFirst && !anyKey(busy, wk) && !anyKey(cur.occupied, wk) && x.seatLeft(cur, w)
			if j < pos && !free && !(isFirst && reclaimEligible(cur, w, 0)) {
				x.passed[w.HolderID]++
				n := x.passed[w.HolderID]
				x.rep.MaxOvertaken = max(x.rep.MaxOvertaken, n)
				if n > x.in.MaxOvertakes || w.Overtakes >= x.in.MaxOvertakes {
					x.rep.OvertakeViolations++
					x.violate("version %d (%s): %s took seat %q past %s, overtaken %d times (field %d), maxOvertakes %d", i, v.Message, h.HolderID, h.Seat, w.HolderID, n, w.Overtakes, x.in.MaxOvertakes)
				}
			}
			if w.Priority <= queue[pos].Priority || !isFirst || anyKey(busy, wk) || x.seatLeft(cur, w) {
				continue
			}
			barred := false
			for _, b := range queue[:j] {
				if b.Overtakes >= x.in.MaxOvertakes && x.seatUsable(b, h.Seat) {
					barred = true
				}
			}
			if !barred {
				x.rep.PriorityInversions++
				x.violate("version %d (%s): priority inversion: %s (class %d) took seat %q while %s (class %d) could", i, v.Message, h.HolderID, queue[pos].Priority, h.Seat, w.HolderID, w.Priority)
			}
		}
	}
}
