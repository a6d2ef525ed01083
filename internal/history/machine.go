package history

import "github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"

// Runner serialization by machine (issue 26): the history rules key every
// per-runner check on the serialization keys of an entry (its runner id and
// the machineId it records), as lockstate does once a machine is recorded.

// machineKeyPrefix cannot begin a trimmed runner id.
const machineKeyPrefix = "\x00machine:"

func serialKeys(runnerID, machineID string) []string {
	ks := []string{runnerID}
	if machineID != "" {
		ks = append(ks, machineKeyPrefix+machineID)
	}
	return ks
}

func anyKey(m map[string]bool, ks []string) bool {
	for _, k := range ks {
		if m[k] {
			return true
		}
	}
	return false
}

func addKeys(m map[string]bool, ks []string) {
	for _, k := range ks {
		m[k] = true
	}
}

// quarantineOf reports whether r is a quarantine e may reclaim: the same
// runner id, or the same recorded machine.
func quarantineOf(r lockstate.Reservation, e lockstate.Entry) bool {
	return r.State == lockstate.ReservationQuarantine &&
		(r.RunnerID == e.RunnerID || (r.MachineID != "" && r.MachineID == e.MachineID))
}

// twoSeatsOnOneMachine returns the first two holders or reservations of s
// that record one machineId.
func twoSeatsOnOneMachine(s *lockstate.State) (a, b string, ok bool) {
	seen := map[string]string{}
	for _, o := range occupants(s) {
		if o.machine == "" {
			continue
		}
		if other, dup := seen[o.machine]; dup {
			return other, o.name, true
		}
		seen[o.machine] = o.name
	}
	return "", "", false
}

// sameMachinePair reports whether s already had both a and b on one machine
// (the finding is reported once, where it began).
func sameMachinePair(s *lockstate.State, a, b string) bool {
	m := map[string]string{}
	for _, o := range occupants(s) {
		m[o.name] = o.machine
	}
	return m[a] != "" && m[a] == m[b]
}

type occupant struct{ name, machine string }

func occupants(s *lockstate.State) []occupant {
	out := make([]occupant, 0, len(s.Holders)+len(s.Reservations))
	for _, h := range s.Holders {
		out = append(out, occupant{"holder " + h.HolderID, h.MachineID})
	}
	for _, r := range s.Reservations {
		out = append(out, occupant{"reservation " + r.ReservationID, r.MachineID})
	}
	return out
}
