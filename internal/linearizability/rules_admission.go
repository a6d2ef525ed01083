package linearizability

// The admission rules of the sequential specification: who may admit a holder,
// seats, FIFO with runner serialization and the admission scan, the overtaking
// bound, queue order, joins and the fencing counter.

import "github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"

// admissions checks every new holder: who admitted it, the incident latch,
// seats, FIFO with runner serialization and the overtaking bound.
func (j *judge) admissions() {
	a := j.st.Actor
	ps, ns := schemaOf(j.prev), schemaOf(j.next)
	free := j.r.MaxHolders - occupancy(j.next)
	for _, e := range j.admitted {
		self := a.isJob() && e.HolderID == a.HolderID && e.RunAttempt == a.Attempt &&
			(e.RunnerName == "" || a.RunnerName == "" || e.RunnerName == a.RunnerName)
		_, wasQueued := j.prevQueue[e.HolderID]
		// Direct handoff (schema <= 3): a release that freed its own seat
		// admits waiters in the same write.
		handoff := a.Kind == ActorJob && ps <= lockstate.HandoffMaxSchema && j.ownRemoved && wasQueued
		if !self && !handoff {
			j.add(CodeAdmissionUnauthorized, "%s@%s admitted by %s", esc(e.HolderID), esc(e.RunAttempt), esc(a.String()))
		}
		if (ps >= 5 && j.prev.ActiveIncident != nil) || (ns >= 5 && j.next.ActiveIncident != nil) {
			j.add(CodeAdmissionIncident, "%s admitted while an account incident is active", esc(e.HolderID))
		}
		if j.r.MaxHolders > 0 && free < 0 {
			j.add(CodeOverAdmission, "%s admitted into a full lock (%d holders + %d reservations, maxHolders %d)", esc(e.HolderID), len(j.next.Holders), len(j.next.Reservations), j.r.MaxHolders)
		}
		if j.reclaimed(e) {
			j.reclaimOrder(e)
			continue
		}
		j.fifo(e, free)
	}
	j.overtakes()
}

// reclaimed: e's admission consumed its runner's quarantine (spec §2.6).
func (j *judge) reclaimed(e lockstate.Holder) bool {
	if schemaOf(j.prev) < 4 || e.RunnerID == "" {
		return false
	}
	next := reservationIndex(j.next)
	for _, r := range j.prev.Reservations {
		if quarantineOf(r, e.Entry) {
			if _, kept := next[r.ReservationID]; !kept {
				return true
			}
		}
	}
	return false
}

// reclaimOrder: a reclaim is made by the first queued entry of the runner
// (or, serialized by machine, of the machine).
func (j *judge) reclaimOrder(e lockstate.Holder) {
	for _, w := range j.prev.Queue {
		if sameMachineOrRunner(w.RunnerID, w.MachineID, e.RunnerID, e.MachineID) {
			if w.HolderID != e.HolderID {
				j.add(CodeFIFOSameRunner, "%s reclaimed runner %s's quarantine ahead of earlier waiter %s", esc(e.HolderID), esc(e.RunnerID), esc(w.HolderID))
			}
			return
		}
	}
}

// scanClass is what the admission scan made of an earlier waiter.
type scanClass int

const (
	scanAdmissible scanClass = iota // could have been admitted instead (co-selected)
	scanBlocked                     // its runner was busy: passing it is an overtake
	scanReclaim                     // reclaim-eligible: waits for its own poll, not a seat
	scanGone                        // not a waiter any more after this write
)

// scan classifies the waiters ahead of position qi of the previous queue as
// the admission scan does (docs/state-schema.md §8.2), on the occupancy of
// the next state without the holders this write admitted.
func (j *judge) scan(qi int) []scanClass {
	serialized := schemaOf(j.next) >= 3
	occupied := map[string]bool{}
	quarantined := map[string]bool{}
	for _, h := range j.next.Holders {
		if !j.admittedID[h.HolderID] {
			addAll(occupied, serialKeys(h.RunnerID, h.MachineID))
		}
	}
	for _, r := range j.next.Reservations {
		addAll(occupied, serialKeys(r.RunnerID, r.MachineID))
		if r.State == lockstate.ReservationQuarantine {
			addAll(quarantined, serialKeys(r.RunnerID, r.MachineID))
		}
	}
	canReclaim := schemaOf(j.next) >= 4 && j.r.MaxHolders-(occupancy(j.next)-len(j.admitted)) >= 0
	seen := map[string]bool{}
	out := make([]scanClass, qi)
	for i, w := range j.prev.Queue[:qi] {
		ks := serialKeys(w.RunnerID, w.MachineID)
		first := !anyOf(seen, ks)
		addAll(seen, ks)
		_, still := j.nextQueue[w.HolderID]
		switch {
		case j.admittedID[w.HolderID]:
			out[i] = scanGone
			addAll(occupied, ks)
		case !still:
			out[i] = scanGone
		case !serialized:
			out[i] = scanAdmissible
		case canReclaim && first && anyOf(quarantined, ks):
			out[i] = scanReclaim
		case !first || anyOf(occupied, ks):
			out[i] = scanBlocked
		default:
			out[i] = scanAdmissible
			addAll(occupied, ks)
		}
	}
	return out
}

// position is where e stood in the previous queue (joined and admitted in
// one write: behind everyone).
func (j *judge) position(holderID string) int {
	if qi, ok := j.prevQueue[holderID]; ok {
		return qi
	}
	return len(j.prev.Queue)
}

// fifo (R-S7): an admission never passes an earlier waiter on its own runner,
// and passes admissible earlier waiters only within the seats still free.
func (j *judge) fifo(e lockstate.Holder, free int) {
	qi := j.position(e.HolderID)
	cls := j.scan(qi)
	admissible := 0
	for i, w := range j.prev.Queue[:qi] {
		if cls[i] == scanGone {
			continue
		}
		if schemaOf(j.next) >= 3 && w.RunnerID == e.RunnerID {
			j.add(CodeFIFOSameRunner, "%s admitted ahead of earlier waiter %s on the same runner %s", esc(e.HolderID), esc(w.HolderID), esc(w.RunnerID))
		} else if schemaOf(j.next) >= 3 && w.MachineID != "" && w.MachineID == e.MachineID {
			j.add(CodeFIFOSameRunner, "%s admitted ahead of earlier waiter %s on the same machine", esc(e.HolderID), esc(w.HolderID))
		}
		if cls[i] == scanAdmissible {
			admissible++
		}
	}
	if j.r.MaxHolders > 0 && admissible > max(free, 0) {
		j.add(CodeFIFOPassed, "%s admitted ahead of %d admissible earlier waiter(s) with only %d seat(s) left", esc(e.HolderID), admissible, max(free, 0))
	}
}

// overtakes (schema 6, R-S7): a waiter's overtakes count rises by exactly
// the admissions that passed it while it was blocked, never past a barrier
// (a blocked waiter already at maxOvertakes), and never changes otherwise; a
// new entry starts at 0 (a rerun refreshing its entry keeps the count).
func (j *judge) overtakes() {
	if schemaOf(j.prev) < lockstate.FencedSchemaVersion || schemaOf(j.next) < lockstate.FencedSchemaVersion {
		return
	}
	passed := map[string]int{}
	for _, e := range j.admitted {
		if j.reclaimed(e) {
			continue
		}
		qi := j.position(e.HolderID)
		for i, c := range j.scan(qi) {
			if c != scanBlocked {
				continue
			}
			w := j.prev.Queue[i]
			passed[w.HolderID]++
			if w.Overtakes >= j.r.MaxOvertakes {
				j.add(CodeOvertakeBarrier, "%s admitted past %s, which was blocked with overtakes %d >= maxOvertakes %d (a barrier)", esc(e.HolderID), esc(w.HolderID), w.Overtakes, j.r.MaxOvertakes)
			}
		}
	}
	for _, n := range j.next.Queue {
		pi, was := j.prevQueue[n.HolderID]
		want := 0
		if was {
			want = j.prev.Queue[pi].Overtakes + passed[n.HolderID]
		}
		if n.Overtakes != want {
			j.add(CodeOvertakeCount, "queue entry %s has overtakes %d, want %d", esc(n.HolderID), n.Overtakes, want)
		}
	}
}

// order: the waiters that stay keep their relative order (a join may be
// inserted among them by arrival, but nobody moves past another).
func (j *judge) order() {
	var before, after []string
	for i, e := range j.prev.Queue {
		if _, still := j.nextQueue[e.HolderID]; still && j.prevQueue[e.HolderID] == i {
			before = append(before, e.HolderID)
		}
	}
	for i, e := range j.next.Queue {
		if _, was := j.prevQueue[e.HolderID]; was && j.nextQueue[e.HolderID] == i {
			after = append(after, e.HolderID)
		}
	}
	for k := range after {
		if after[k] != before[k] {
			j.add(CodeQueueOrder, "%s moved ahead of %s in the queue", esc(after[k]), esc(before[k]))
			return
		}
	}
}

// joins: a queue entry is added (or refreshed to another attempt) only by
// its own job, and never while an incident is active.
func (j *judge) joins() {
	a := j.st.Actor
	for _, n := range j.next.Queue {
		pi, was := j.prevQueue[n.HolderID]
		if was && j.prev.Queue[pi].RunAttempt == n.RunAttempt {
			continue
		}
		if !a.isJob() || n.HolderID != a.HolderID || n.RunAttempt != a.Attempt {
			j.add(CodeJoinUnauthorized, "%s@%s queued by %s", esc(n.HolderID), esc(n.RunAttempt), esc(a.String()))
		}
		if schemaOf(j.prev) >= 5 && j.prev.ActiveIncident != nil {
			j.add(CodeJoinUnauthorized, "%s queued while incident %s is active", esc(n.HolderID), esc(j.prev.ActiveIncident.IncidentID))
		}
	}
}

// fencing (R-S5): at schema 6 the counter rises by exactly the admissions
// of the write (it starts at 0 on the migration), and each new holder gets a
// distinct token above the previous counter.
func (j *judge) fencing() {
	if schemaOf(j.next) < lockstate.FencedSchemaVersion {
		return
	}
	base := int64(0)
	if schemaOf(j.prev) >= lockstate.FencedSchemaVersion {
		base = j.prev.FencingToken
	}
	if want := base + int64(len(j.admitted)); j.next.FencingToken != want {
		j.add(CodeFencing, "counter %d -> %d with %d admission(s) (want %d)", base, j.next.FencingToken, len(j.admitted), want)
	}
	seen := map[int64]bool{}
	for _, h := range j.admitted {
		if h.FencingToken <= base || h.FencingToken > j.next.FencingToken || seen[h.FencingToken] {
			j.add(CodeFencing, "%s admitted with token %d (previous counter %d, new counter %d)", esc(h.HolderID), h.FencingToken, base, j.next.FencingToken)
		}
		seen[h.FencingToken] = true
	}
}
