package history

import (
	"fmt"
	"slices"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// Seat rules (issue 25, schema 6 with named seats, labels and priority
// classes). They are checked independently of the replay, like the fencing
// and overtaking rules, so a wrong write is named by what it broke rather
// than only as unexplained. The overtaking bound (RuleOvertakingBound)
// covers seat-mode admissions as it covers anonymous ones.
const (
	// RuleSeatConflict: two holders, or a holder and a reservation, or two
	// reservations record one seat (the decoder refuses such a document;
	// the finding's Detail carries its message).
	RuleSeatConflict Rule = "seat-conflict"
	// RuleSeatLabels: an admission put a holder on a seat that no config in
	// force names with all of the holder's labels (or, under anonymous
	// seats, admitted a labelled waiter or recorded a seat it could not
	// have taken).
	RuleSeatLabels Rule = "seat-labels"
	// RulePriorityOrder: an admission to a seat passed a waiter of a higher
	// priority class that the core's admission plan would have admitted
	// first: one that was admissible (its runner free, first of its
	// runner, no quarantine to reclaim), could use the seat, and was not
	// held back by an earlier waiter at the overtaking bound that could
	// use it too, while too few other free seats were left for the
	// higher-class waiters (or, anonymous, too few free seats).
	RulePriorityOrder Rule = "priority-order"
)

// seatRules checks the seat-labels and priority-order rules for every
// admission of the write (schema 6 only). cfgs are the configs the writer
// may have used; a rule is broken only when no config explains the
// admission.
func (v *verifier) seatRules(ver *Version, prev, next *lockstate.State, d diff, cfgs []lockstate.Config, before, after string) {
	if next.SchemaVersion < lockstate.FencedSchemaVersion {
		return
	}
	for _, h := range d.addedHolders {
		reclaimed := reclaimedSeat(d, h)
		if !labelsExplained(h, cfgs, reclaimed) {
			what := "no seat"
			if h.Seat != "" {
				what = "seat " + h.Seat
			}
			labels := "no labels"
			if h.Labels != "" {
				labels = "labels " + h.Labels
			}
			v.find(ver, RuleSeatLabels, before, after, fmt.Sprintf("%s was admitted to %s with %s, which no config in force allows (a seat must carry every label of its holder)", h.HolderID, what, labels))
			return
		}
		if reclaimed != nil || prev.SchemaVersion < lockstate.FencedSchemaVersion {
			continue // a reclaim takes no free seat; an upgrade write is the replay's to judge
		}
		if w, ok := priorityPassed(prev, next, h, cfgs); ok {
			v.find(ver, RulePriorityOrder, before, after, fmt.Sprintf("%s (priority %d) was admitted to %s while %s (priority %d) waited: it could use that seat, its runner was free, no waiter at the overtaking bound held it back, and no other free seat was left for it",
				h.HolderID, h.Priority, seatName(h.Seat), w.HolderID, w.Priority))
			return
		}
	}
}

func seatName(s string) string {
	if s == "" {
		return "an anonymous seat"
	}
	return "seat " + s
}

// reclaimedSeat returns the quarantine of h's runner (or, serialized by
// machine, of its machine) the write consumed (the reclaim), or nil.
func reclaimedSeat(d diff, h lockstate.Holder) *lockstate.Reservation {
	for _, r := range d.removedRes {
		if h.RunnerID != "" && quarantineOf(r, h.Entry) {
			return &r
		}
	}
	return nil
}

// labelsExplained reports whether some config of cfgs lets h hold its
// seat: a named seat of that config carrying all of h's labels, or, with
// anonymous seats, no labels and no seat (or the reclaimed quarantine's).
func labelsExplained(h lockstate.Holder, cfgs []lockstate.Config, reclaimed *lockstate.Reservation) bool {
	for _, c := range cfgs {
		if c.Seats.Len() > 0 {
			if sc, ok := c.Seat(h.Seat); ok && h.Seat != "" && sc.Carries(h.LabelList()) {
				return true
			}
			continue
		}
		if h.Labels == "" && (h.Seat == "" || reclaimed != nil && reclaimed.Seat == h.Seat) {
			return true
		}
	}
	return false
}

// priorityPassed reports a higher-class waiter that h's admission passed
// under every config that could have seated h, or false. It checks what
// the core's admission plan guarantees and no more: the plan takes
// admissible waiters by class (FIFO within one) and gives each a free seat
// it can use unless a barrier (an earlier-queued waiter at the overtaking
// bound that could use the seat, h itself included: it was not admitted
// yet when the higher class was served) holds it back; so when h took
// seat S, every
// higher-class admissible waiter that could use S without a barrier was
// given a seat of its own first: they need distinct free seats other than
// S, and fit within the capacity with h.
func priorityPassed(prev, next *lockstate.State, h lockstate.Holder, cfgs []lockstate.Config) (lockstate.Entry, bool) {
	at, ok := lockstate.ParseTime(h.AcquiredAt)
	if !ok {
		return lockstate.Entry{}, false
	}
	work, _ := lockstate.PruneExpiredCooldowns(prev, at)
	queue := slices.Clone(work.Queue)
	xi := lockstate.QueuePosition(work, h.HolderID) - 1
	if xi >= 0 {
		queue[xi].Labels, queue[xi].Priority = h.Labels, h.Priority
	} else {
		e := h.Entry
		e.Seat, e.Overtakes = "", 0
		queue = append(queue, e)
		xi = len(queue) - 1
	}
	x := queue[xi]
	waiting := map[string]bool{}
	for _, e := range next.Queue {
		waiting[e.HolderID] = true
	}
	occupied := map[string]bool{}
	taken := map[string]bool{}
	unassigned := 0
	for _, o := range work.Holders {
		addKeys(occupied, serialKeys(o.RunnerID, o.MachineID))
		taken[o.Seat] = true
		if o.Seat == "" {
			unassigned++
		}
	}
	for _, r := range work.Reservations {
		addKeys(occupied, serialKeys(r.RunnerID, r.MachineID))
		taken[r.Seat] = true
		if r.Seat == "" {
			unassigned++
		}
	}
	var found lockstate.Entry
	applicable, violated := 0, 0
	for _, cfg := range cfgs {
		named := cfg.Seats.Len() > 0
		usable := func(e lockstate.Entry, seat string) bool {
			if !named {
				return e.Labels == ""
			}
			sc, ok := cfg.Seat(seat)
			return ok && sc.Carries(e.LabelList())
		}
		if named && (h.Seat == "" || !usable(x, h.Seat)) || !named && (h.Seat != "" || x.Labels != "") {
			continue // this config could not have seated h: not the one the writer used
		}
		applicable++
		// must: the higher-class waiters the plan admits before h.
		var must []lockstate.Entry
		seen := map[string]bool{}
		for i, w := range queue {
			wk := serialKeys(w.RunnerID, w.MachineID)
			first := !anyKey(seen, wk)
			addKeys(seen, wk)
			if i == xi || !first || anyKey(occupied, wk) || !waiting[w.HolderID] || w.Priority <= x.Priority || !usable(w, h.Seat) {
				continue
			}
			barred := false
			for b := range i {
				if queue[b].Overtakes >= cfg.MaxOvertakes && usable(queue[b], h.Seat) {
					barred = true
					break
				}
			}
			if !barred {
				must = append(must, w)
			}
		}
		if len(must) == 0 {
			continue
		}
		if !named {
			if len(must)+1 > lockstate.FreeSlots(work, cfg) {
				violated++
				found = must[0]
			}
			continue
		}
		var free []lockstate.SeatConfig
		for _, sc := range cfg.Seats.List() {
			if !taken[sc.Name] && sc.Name != h.Seat {
				free = append(free, sc)
			}
		}
		capacity := len(free) + 1 - unassigned
		if w, short := unmatched(must, free); short || len(must)+1 > capacity {
			if !short {
				w = must[0]
			}
			violated++
			found = w
		}
	}
	return found, applicable > 0 && violated == applicable
}

// unmatched reports whether the waiters cannot all be given distinct seats
// of free that carry their labels (a maximum bipartite matching), and one
// waiter left without a seat.
func unmatched(waiters []lockstate.Entry, free []lockstate.SeatConfig) (lockstate.Entry, bool) {
	owner := make([]int, len(free))
	for i := range owner {
		owner[i] = -1
	}
	var try func(w int, visited []bool) bool
	try = func(w int, visited []bool) bool {
		for s, sc := range free {
			if visited[s] || !sc.Carries(waiters[w].LabelList()) {
				continue
			}
			visited[s] = true
			if owner[s] < 0 || try(owner[s], visited) {
				owner[s] = w
				return true
			}
		}
		return false
	}
	for w := range waiters {
		if !try(w, make([]bool, len(free))) {
			return waiters[w], true
		}
	}
	return lockstate.Entry{}, false
}

// occupancy counts the holders and the holders plus reservations of s
// that occupy capacity under the window's most lenient config: under a
// config naming seats, those recording no seat or a seat of its list (a
// seat it no longer names drains outside its capacity); under anonymous
// seats, all of them.
func (w configWindow) occupancy(s *lockstate.State) (holders, total int) {
	holders, total = -1, -1
	for _, c := range w.candidates {
		var names map[string]bool
		if c.Seats.Len() > 0 {
			names = map[string]bool{}
			for _, sc := range c.Seats.List() {
				names[sc.Name] = true
			}
		}
		h, t := occupancy(s, names)
		if holders < 0 || h < holders {
			holders = h
		}
		if total < 0 || t < total {
			total = t
		}
	}
	return max(holders, 0), max(total, 0)
}

// occupancy counts the holders and the holders plus reservations of s that
// occupy capacity: with named seats (seats not nil), those recording no
// seat or a seat of the list.
func occupancy(s *lockstate.State, seats map[string]bool) (holders, total int) {
	counts := func(seat string) bool { return seats == nil || seat == "" || seats[seat] }
	for _, h := range s.Holders {
		if counts(h.Seat) {
			holders++
		}
	}
	total = holders
	for _, r := range s.Reservations {
		if counts(r.Seat) {
			total++
		}
	}
	return holders, total
}
