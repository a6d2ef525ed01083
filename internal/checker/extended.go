package checker

import (
	"fmt"
	"slices"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// extended holds the checks added for the simulation (reliability goals
// R-S4 authorized removals, R-S5 fencing, R-S7 bounded overtaking, R-S8
// incident latch). They run on every version like the original checks.
type extended struct {
	in      Input
	rep     *Report
	violate func(format string, args ...any)
	// issued holds every fencing token seen on a holder.
	issued map[int64]bool
	// passed counts, per waiting holderId, the admissions that passed it
	// while its runner was busy (the checker's own overtake count).
	passed map[string]int
}

// perVersion checks what needs no predecessor: the overtakes field bound.
func (x *extended) perVersion(i int, v Version, st *lockstate.State) {
	if !x.in.CheckOvertakes || st.SchemaVersion < lockstate.FencedSchemaVersion {
		return
	}
	for _, q := range st.Queue {
		if q.Overtakes > x.in.MaxOvertakes {
			x.rep.OvertakeViolations++
			x.violate("version %d (%s): queue entry %s has overtakes %d > maxOvertakes %d", i, v.Message, q.HolderID, q.Overtakes, x.in.MaxOvertakes)
		}
	}
}

// fencing checks R-S5: the counter never decreases, and every new
// admission carries a token above the previous counter, never reused.
func (x *extended) fencing(i int, v Version, prev, cur *snapshot) {
	if cur.st.SchemaVersion < lockstate.FencedSchemaVersion {
		return
	}
	if prev.st.SchemaVersion >= lockstate.FencedSchemaVersion && cur.st.FencingToken < prev.st.FencingToken {
		x.rep.FencingViolations++
		x.violate("version %d (%s): fencing counter went back from %d to %d", i, v.Message, prev.st.FencingToken, cur.st.FencingToken)
	}
	for _, h := range cur.st.Holders {
		old, was := prev.holders[h.HolderID]
		if was && old.FencingToken == h.FencingToken && old.RunAttempt == h.RunAttempt {
			continue
		}
		if was && old.FencingToken == h.FencingToken {
			// A holder whose attempt changed keeps no admission: it must
			// have been re-admitted with a new token.
			x.rep.FencingViolations++
			x.violate("version %d (%s): holder %s changed attempt %s -> %s without a new fencing token", i, v.Message, h.HolderID, old.RunAttempt, h.RunAttempt)
			continue
		}
		switch {
		case x.issued[h.FencingToken]:
			x.rep.FencingViolations++
			x.violate("version %d (%s): fencing token %d of %s was issued before", i, v.Message, h.FencingToken, h.HolderID)
		case prev.st.SchemaVersion >= lockstate.FencedSchemaVersion && h.FencingToken <= prev.st.FencingToken:
			x.rep.FencingViolations++
			x.violate("version %d (%s): fencing token %d of %s is not above the previous counter %d", i, v.Message, h.FencingToken, h.HolderID, prev.st.FencingToken)
		}
		x.issued[h.FencingToken] = true
	}
}

// incident checks R-S8: no admission while an incident stays active.
func (x *extended) incident(i int, v Version, prev, cur *snapshot) {
	if prev.st.ActiveIncident == nil || cur.st.ActiveIncident == nil || prev.st.ActiveIncident.IncidentID != cur.st.ActiveIncident.IncidentID {
		return
	}
	for _, h := range cur.st.Holders {
		if _, was := prev.holders[h.HolderID]; !was {
			x.rep.IncidentAdmissions++
			x.violate("version %d (%s): %s admitted while incident %s is active", i, v.Message, h.HolderID, cur.st.ActiveIncident.IncidentID)
		}
	}
}

// overtakes keeps the checker's own count of admissions that passed each
// blocked waiter (R-S7) and checks it against the bound at schema 6.
func (x *extended) overtakes(i int, v Version, prev, cur *snapshot) {
	x.startBoundAtUpgrade(prev, cur)
	for id := range x.passed {
		if _, still := cur.queued[id]; !still {
			delete(x.passed, id)
		}
	}
	for _, h := range cur.st.Holders {
		if _, was := prev.holders[h.HolderID]; was || reclaimed(prev, cur, h.Entry) {
			continue
		}
		pos, wasQueued := prev.queued[h.HolderID]
		if !wasQueued {
			pos = len(prev.st.Queue)
		}
		runners := map[string]bool{}
		firstOnRunner := map[string]bool{}
		for _, w := range prev.st.Queue[:pos] {
			wk := entryKeys(w)
			first := !anyKey(firstOnRunner, wk)
			addKeys(firstOnRunner, wk)
			if _, still := cur.queued[w.HolderID]; !still || w.RunnerID == "" || shareKey(wk, entryKeys(h.Entry)) {
				continue
			}
			if first && reclaimEligible(cur, w, x.in.MaxHolders) {
				// Spec §2.6 "Same-runner quarantine reclaim at admission":
				// the first queued entry of a runner holding a quarantine
				// swaps it for a holder without a free seat. It waits for
				// its own poll, not for a seat, so passing it is no
				// overtake (lockstate scanQueue: "neither ranked nor
				// blocked").
				addKeys(runners, wk)
				continue
			}
			if !anyKey(cur.occupied, wk) && !anyKey(runners, wk) {
				addKeys(runners, wk) // admissible: polling later, not overtaken
				continue
			}
			addKeys(runners, wk)
			x.passed[w.HolderID]++
			n := x.passed[w.HolderID]
			x.rep.MaxOvertaken = max(x.rep.MaxOvertaken, n)
			if x.in.CheckOvertakes && cur.st.SchemaVersion >= lockstate.FencedSchemaVersion && prev.st.SchemaVersion >= lockstate.FencedSchemaVersion && n > x.in.MaxOvertakes {
				x.rep.OvertakeViolations++
				x.violate("version %d (%s): %s admitted past %s, overtaken %d times > maxOvertakes %d", i, v.Message, h.HolderID, w.HolderID, n, x.in.MaxOvertakes)
			}
		}
	}
}

// startBoundAtUpgrade starts every waiter's count again at the upgrade to
// schema 6: the bound starts with fencing, and the upgrade carries every
// waiter across with 0 overtakes (docs/state-schema.md §10). Both the
// anonymous check (overtakes) and the seat check (seats) count from there:
// an upgrade that also names seats is a seat-mode version pair, and a count
// carried from schema 5 made the seat check report a waiter passed more
// often than the bound allows (soak seed 101285).
func (x *extended) startBoundAtUpgrade(prev, cur *snapshot) {
	if prev.st.SchemaVersion < lockstate.FencedSchemaVersion && cur.st.SchemaVersion >= lockstate.FencedSchemaVersion {
		clear(x.passed)
	}
}

// removals classifies every removal of a version with a known actor and
// asks Input.Authorize about each (R-S3, R-S4).
func (x *extended) removals(i int, v Version, prev, cur *snapshot) {
	ask := func(ev RemovalEvent) {
		ev.Version, ev.Time, ev.Message, ev.Actor, ev.Schema = i, cur.t, v.Message, v.Actor, cur.st.SchemaVersion
		if why := x.in.Authorize(ev); why != "" {
			x.rep.UnauthorizedRemovals++
			x.rep.LostEntries++
			x.violate("version %d (%s) by %s: %s %s removed without authority: %s", i, v.Message, v.Actor, ev.Kind, removalName(ev), why)
		}
	}
	newRes := map[string]lockstate.Reservation{}
	for _, r := range cur.st.Reservations {
		newRes[r.ReservationID] = r
	}
	oldRes := map[string]bool{}
	for _, r := range prev.st.Reservations {
		oldRes[r.ReservationID] = true
	}
	for _, id := range sortedKeys(prev.holders) {
		h := prev.holders[id]
		if c, ok := cur.holders[id]; ok && c.RunAttempt == h.RunAttempt && c.FencingToken == h.FencingToken {
			continue
		}
		ev := RemovalEvent{Kind: "holder", Entry: h.Entry, Holder: h}
		for _, r := range cur.st.Reservations {
			if !oldRes[r.ReservationID] && r.HolderID == h.HolderID && r.RunAttempt == h.RunAttempt {
				rr := r
				ev.Reservation = &rr
			}
		}
		ask(ev)
	}
	for _, id := range sortedKeys(prev.queued) {
		e := prev.st.Queue[prev.queued[id]]
		if _, held := cur.holders[id]; held {
			continue
		}
		if qi, still := cur.queued[id]; still {
			if c := cur.st.Queue[qi]; c.RunAttempt == e.RunAttempt || isNewerAttempt(c.RunAttempt, e.RunAttempt) {
				continue // kept, or refreshed by a newer attempt of the same holder
			}
		}
		ask(RemovalEvent{Kind: "queue", Entry: e})
	}
	for _, r := range prev.st.Reservations {
		if r.State != lockstate.ReservationQuarantine {
			continue
		}
		if c, ok := newRes[r.ReservationID]; ok && c.State == lockstate.ReservationQuarantine {
			continue
		}
		if consumed(prev, cur, r) {
			continue // consumed by a same-runner (or same-machine) reclaim admission
		}
		rr := r
		ask(RemovalEvent{Kind: "quarantine", Reservation: &rr})
	}
}

func removalName(ev RemovalEvent) string {
	if ev.Kind == "quarantine" && ev.Reservation != nil {
		return fmt.Sprintf("%s (%s, runner %s)", ev.Reservation.ReservationID, ev.Reservation.HolderID, ev.Reservation.RunnerID)
	}
	return fmt.Sprintf("%s@%s", ev.Entry.HolderID, ev.Entry.RunAttempt)
}

func isNewerAttempt(a, b string) bool {
	if len(a) != len(b) {
		return len(a) > len(b)
	}
	return a > b
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
