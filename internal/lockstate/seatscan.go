package lockstate

import (
	"cmp"
	"slices"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/plant"
)

// seatMode reports whether admission follows the issue-25 rules (seatPlan)
// instead of the anonymous FIFO scan (scanQueue): at schema 6, when the
// config names seats or any waiter carries labels or a priority class.
// With neither, admission is exactly what it was before issue 25.
func seatMode(s *State, cfg Config) bool {
	if s.SchemaVersion < FencedSchemaVersion {
		return false
	}
	if cfg.Seats.Len() > 0 {
		return true
	}
	for _, e := range s.Queue {
		if e.Priority != 0 || e.Labels != "" {
			return true
		}
	}
	return false
}

// seatPlan is the admission plan of one state under the issue-25 rules:
// which waiters the free seats go to now and which seat each takes.
type seatPlan struct {
	// admit[i] marks queue entry i as admitted by this plan; seat[i] is
	// its seat ("" with anonymous seats).
	admit []bool
	seat  []string
	// rank[i] is entry i's position among the admissible waiters in
	// admission order (priority class first, then FIFO), or -1 when it
	// cannot be admitted whatever seats free up now: its runner is busy,
	// an earlier entry on its runner waits, or a barrier holds every seat
	// carrying its labels. An admitted entry's rank is below the number
	// admitted.
	rank []int
	// reclaim[i] marks the same-runner quarantine reclaim; reclaimSeat[i]
	// is the quarantine's seat the new holder takes.
	reclaim     []bool
	reclaimSeat []string
	named       bool
	seats       []SeatConfig
	byName      map[string]SeatConfig
}

// usable reports whether entry e could be admitted to seat (named seats)
// or to any anonymous seat (an empty label set only).
func (p seatPlan) usable(e Entry, seat string) bool {
	if !p.named {
		return e.Labels == ""
	}
	sc, ok := p.byName[seat]
	return ok && sc.Carries(e.LabelList())
}

// planSeats computes the admission plan (issue 25):
//   - Per-runner serialization as in scanQueue (by serialKeys): an entry whose runner holds
//     a slot or a reservation, or that has an earlier entry on its runner,
//     is blocked; the first entry of a runner with a quarantine reclaims
//     it (named seats: only when the quarantine's seat is still configured
//     and carries the entry's labels), taking no free seat.
//   - Free seats: configured seats no holder or reservation records, less
//     one for every holder or reservation recording no seat (admitted
//     before the config named its seats); a seat removed from the config
//     is never free (it drains). Anonymous: FreeSlots.
//   - Admissible waiters are taken in priority order (higher class first,
//     FIFO within a class); each takes a free seat carrying all its labels
//     that no earlier-queued unadmitted barrier (an entry overtaken
//     cfg.MaxOvertakes times) could use; a waiter finding none waits
//     without holding anyone back whose labels need other seats.
//   - Seat choice (affinity): the free usable seat whose last holder ran on
//     the same runner (RunnerKey; under machine serialization the same
//     machine, AffinityKey), else the least recently used one, ties
//     in config order.
func planSeats(s *State, cfg Config) seatPlan {
	n := len(s.Queue)
	p := seatPlan{admit: make([]bool, n), seat: make([]string, n), rank: make([]int, n), reclaim: make([]bool, n), reclaimSeat: make([]string, n), seats: cfg.Seats.List(), byName: map[string]SeatConfig{}}
	p.named = len(p.seats) > 0
	for _, sc := range p.seats {
		p.byName[sc.Name] = sc
	}
	keys := newSerialKeys(s, cfg)
	occ := newOccupancy(s, keys)
	taken := map[string]bool{}
	unassigned := 0
	for _, h := range s.Holders {
		taken[h.Seat] = !plant.Enabled(plant.SeatGivenTwice) // planted bug (tests only)
		if h.Seat == "" {
			unassigned++
		}
	}
	for _, r := range s.Reservations {
		taken[r.Seat] = true
		if r.Seat == "" {
			unassigned++
		}
	}
	var free []string
	capacity := FreeSlots(s, cfg)
	if p.named {
		for _, sc := range p.seats {
			if !taken[sc.Name] {
				free = append(free, sc.Name)
			}
		}
		capacity = len(free) - unassigned
	}
	blocked := make([]bool, n)
	seen := keySet{}
	for i, e := range s.Queue {
		k := keys.of(e.RunnerID, e.MachineID)
		first := !seen.hasAny(k)
		seen.add(k)
		qi := -1
		if first {
			qi = occ.quarantine(e)
		}
		switch {
		case qi >= 0 && (p.named && p.usable(e, s.Reservations[qi].Seat) || !p.named && FreeSlots(s, cfg) >= 0 && e.Labels == ""):
			p.reclaim[i], p.reclaimSeat[i] = true, s.Reservations[qi].Seat
		case occ.busy(e) || !first:
			blocked[i] = true
		}
	}
	order := make([]int, 0, n)
	for i := range s.Queue {
		p.rank[i] = -1
		if !blocked[i] && !p.reclaim[i] {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(s.Queue[b].Priority, s.Queue[a].Priority) })
	lastUse := map[string]SeatUse{}
	for _, u := range s.Seats {
		lastUse[u.Name] = u
	}
	// barred reports whether an unadmitted barrier queued before i could
	// use seat (anonymous: any seat).
	barred := func(i int, seat string) bool {
		for w := range i {
			e := s.Queue[w]
			if !p.admit[w] && !p.reclaim[w] && e.Overtakes >= cfg.MaxOvertakes && p.usable(e, seat) && !(plant.Enabled(plant.PriorityStarves) && s.Queue[i].Priority > e.Priority) { // planted bug (tests only)
				return true
			}
		}
		return false
	}
	admitted, next := 0, 0
	for _, i := range order {
		e := s.Queue[i]
		if !p.named {
			if !p.usable(e, "") || barred(i, "") {
				continue
			}
			p.rank[i] = next
			next++
			if admitted < capacity {
				p.admit[i] = true
				admitted++
			}
			continue
		}
		var options []string
		reachable := false
		for _, sc := range p.seats {
			if !sc.Carries(e.LabelList()) || barred(i, sc.Name) {
				continue
			}
			reachable = true
			if slices.Contains(free, sc.Name) && !taken[sc.Name] {
				options = append(options, sc.Name)
			}
		}
		if !reachable {
			continue
		}
		p.rank[i] = next
		next++
		if admitted >= capacity || len(options) == 0 {
			continue
		}
		seat := chooseSeat(options, lastUse, AffinityKey(e, keys.byMachine))
		p.admit[i], p.seat[i] = true, seat
		taken[seat] = true
		admitted++
	}
	return p
}

// chooseSeat is seat affinity: the option whose last holder ran on runner,
// else the least recently used option (never used first), ties in the
// order given (config order).
func chooseSeat(options []string, lastUse map[string]SeatUse, runner string) string {
	if runner != "" {
		for _, o := range options {
			if lastUse[o].LastRunner == runner {
				return o
			}
		}
	}
	best := options[0]
	for _, o := range options[1:] {
		if lastUse[o].LastUsedAt < lastUse[best].LastUsedAt {
			best = o
		}
	}
	return best
}

// recordSeatUse stamps seat's affinity record with runner and now, keeps
// the records in config order and drops records of seats the config no
// longer names.
func recordSeatUse(s *State, cfg Config, seat, runner, now string) {
	old := map[string]SeatUse{}
	for _, u := range s.Seats {
		old[u.Name] = u
	}
	old[seat] = SeatUse{Name: seat, LastRunner: runner, LastUsedAt: now}
	out := make([]SeatUse, 0, cfg.Seats.Len())
	for _, sc := range cfg.Seats.List() {
		if u, ok := old[sc.Name]; ok {
			out = append(out, u)
		}
	}
	s.Seats = out
}
