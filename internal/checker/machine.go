package checker

import "github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"

// Runner serialization by machine (issue 26). The checker keys every
// per-runner rule on the serialization keys of an entry, stated here
// independently of lockstate: its runner id, and the machineId it records.
// lockstate applies the machine key whenever the config sets serializeBy
// "machine" or any entry records a machineId, and acquire records one only
// under "machine", so keying on every recorded machineId is the same rule.

// machineKeyPrefix cannot begin a runner id a waiter is compared with
// (runner ids are trimmed and never start with a NUL).
const machineKeyPrefix = "\x00machine:"

// keysOf returns the serialization keys of an entry ("" runner ids have
// none: they were written below schema 3).
func keysOf(runnerID, machineID string) []string {
	var ks []string
	if runnerID != "" {
		ks = append(ks, runnerID)
	}
	if machineID != "" {
		ks = append(ks, machineKeyPrefix+machineID)
	}
	return ks
}

func entryKeys(e lockstate.Entry) []string { return keysOf(e.RunnerID, e.MachineID) }

func resKeys(r lockstate.Reservation) []string { return keysOf(r.RunnerID, r.MachineID) }

// anyKey reports whether m holds one of ks.
func anyKey(m map[string]bool, ks []string) bool {
	for _, k := range ks {
		if m[k] {
			return true
		}
	}
	return false
}

// addKeys puts every key of ks in m.
func addKeys(m map[string]bool, ks []string) {
	for _, k := range ks {
		m[k] = true
	}
}

// shareKey reports whether a and b have a key in common.
func shareKey(a, b []string) bool {
	for _, x := range a {
		for _, y := range b {
			if x == y {
				return true
			}
		}
	}
	return false
}

// oneSeatPerMachine is the invariant of serializeBy "machine": no two
// holders or reservations of one state record the same machineId.
func oneSeatPerMachine(st *lockstate.State) (machine, first, second string, ok bool) {
	seen := map[string]string{}
	check := func(m, who string) bool {
		if m == "" {
			return true
		}
		if other, dup := seen[m]; dup {
			machine, first, second = m, other, who
			return false
		}
		seen[m] = who
		return true
	}
	for _, h := range st.Holders {
		if !check(h.MachineID, "holder "+h.HolderID) {
			return machine, first, second, false
		}
	}
	for _, r := range st.Reservations {
		if !check(r.MachineID, "reservation "+r.ReservationID) {
			return machine, first, second, false
		}
	}
	return "", "", "", true
}

// reclaimed reports whether the new holder h of cur consumed a quarantine
// of prev that shares a serialization key with it (its runner's, or under
// serializeBy "machine" its machine's): a quarantine reclaim.
func reclaimed(prev, cur *snapshot, h lockstate.Entry) bool {
	ks := entryKeys(h)
	if len(ks) == 0 {
		return false
	}
	for _, r := range prev.st.Reservations {
		if r.State == lockstate.ReservationQuarantine && shareKey(ks, resKeys(r)) && !hasReservation(cur.st, r.ReservationID) {
			return true
		}
	}
	return false
}

// consumed reports whether quarantine q of prev is gone in cur because a
// new holder sharing a serialization key with it reclaimed it.
func consumed(prev, cur *snapshot, q lockstate.Reservation) bool {
	if hasReservation(cur.st, q.ReservationID) {
		return false
	}
	for _, h := range cur.st.Holders {
		if _, was := prev.holders[h.HolderID]; !was && shareKey(entryKeys(h.Entry), resKeys(q)) {
			return true
		}
	}
	return false
}

func hasReservation(st *lockstate.State, id string) bool {
	for _, r := range st.Reservations {
		if r.ReservationID == id {
			return true
		}
	}
	return false
}

// reclaimEligible reports whether, in cur, the first queued entry w of its
// runner (and machine) may reclaim a quarantine at admission: schema >= 4,
// freeSlots >= 0, and the only holder or reservation sharing a key with w
// is a quarantine (spec §2.6; lockstate occupancy.quarantine).
func reclaimEligible(cur *snapshot, w lockstate.Entry, limit int) bool {
	if cur.st.SchemaVersion < 4 {
		return false
	}
	ks := entryKeys(w)
	quarantines, others := 0, 0
	for _, h := range cur.st.Holders {
		if shareKey(ks, entryKeys(h.Entry)) {
			others++
		}
	}
	for _, r := range cur.st.Reservations {
		if !shareKey(ks, resKeys(r)) {
			continue
		}
		if r.State == lockstate.ReservationQuarantine {
			quarantines++
		} else {
			others++
		}
	}
	used := len(cur.st.Holders) + len(cur.st.Reservations)
	return quarantines == 1 && others == 0 && (limit <= 0 || used <= limit)
}
