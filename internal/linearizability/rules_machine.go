package linearizability

// Runner serialization by machine (issue 26): the model keys its per-runner
// rules on every serialization key of an entry, its runner id and the
// machineId it records (lockstate applies the machine key whenever an
// entry records one, and acquire records one only under serializeBy
// "machine"), and checks that no state gives one machine two seats.

import "github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"

// CodeMachineSerialization is the rule "one seat per machine": no state
// records one machineId on two holders or reservations.
const CodeMachineSerialization = "machine-serialization"

// machinePrefix cannot begin a (trimmed) runner id.
const machinePrefix = "\x00machine:"

func serialKeys(runnerID, machineID string) []string {
	ks := []string{runnerID}
	if machineID != "" {
		ks = append(ks, machinePrefix+machineID)
	}
	return ks
}

func anyOf(m map[string]bool, ks []string) bool {
	for _, k := range ks {
		if m[k] {
			return true
		}
	}
	return false
}

func addAll(m map[string]bool, ks []string) {
	for _, k := range ks {
		m[k] = true
	}
}

// sameMachineOrRunner reports whether two entries share a serialization key.
func sameMachineOrRunner(r1, m1, r2, m2 string) bool {
	return (r1 != "" && r1 == r2) || (m1 != "" && m1 == m2)
}

// machines checks the next state: one seat per machine.
func (j *judge) machines() {
	seen := map[string]string{}
	check := func(m, who string) {
		if m == "" {
			return
		}
		if other, dup := seen[m]; dup {
			j.add(CodeMachineSerialization, "machine %s holds two seats: %s and %s", esc(m), esc(other), esc(who))
			return
		}
		seen[m] = who
	}
	for _, h := range j.next.Holders {
		check(h.MachineID, "holder "+h.HolderID)
	}
	for _, r := range j.next.Reservations {
		check(r.MachineID, "reservation "+r.ReservationID)
	}
}

// quarantineOf reports whether reservation r is a quarantine e may reclaim
// by key (same runner, or same recorded machine).
func quarantineOf(r lockstate.Reservation, e lockstate.Entry) bool {
	return r.State == lockstate.ReservationQuarantine && sameMachineOrRunner(r.RunnerID, r.MachineID, e.RunnerID, e.MachineID)
}
