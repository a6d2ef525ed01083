package lockstate

import (
	"fmt"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/plant"
)

// The values of the lock config key "serializeBy" (issue 26).
const (
	// SerializeByRunner keys runner serialization on the caller's runner id
	// (the reference's rule, and the default).
	SerializeByRunner = "runner"
	// SerializeByMachine keys it on the physical machine as well: entries
	// recording one machineId share one seat (see serialKeys).
	SerializeByMachine = "machine"
)

// MachineIDLength is the length of a recorded machineId: 32 lowercase hex
// digits (internal/machineid.Derive, a per-repository hash; never the raw
// operating-system id).
const MachineIDLength = 32

// ValidMachineID reports whether v is 32 lowercase hexadecimal digits.
func ValidMachineID(v string) bool {
	if len(v) != MachineIDLength {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// ByMachine reports whether cfg asks for serialization by machine.
func (c Config) ByMachine() bool { return c.SerializeBy == SerializeByMachine }

// MachineSerialization reports whether the runner-serialization rules of s
// also key on the machine: the config asks for it, or an entry of s (a
// holder, a queue entry or a reservation) already records a machineId.
// Like EffectiveRunnerSerialization, a config that cannot be read (the
// defaults say "runner") or that was switched back never weakens the
// protection of entries already written under "machine": it lapses once
// no entry records a machine any more (acquire records one only while the
// config asks for it).
func MachineSerialization(s *State, cfg Config) bool {
	if plant.Enabled(plant.MachineSerializationIgnored) { // planted bug (tests only)
		return false
	}
	if cfg.ByMachine() {
		return true
	}
	return RecordsMachine(s)
}

// RecordsMachine reports whether any entry of s records a machineId.
func RecordsMachine(s *State) bool {
	for _, h := range s.Holders {
		if h.MachineID != "" {
			return true
		}
	}
	for _, e := range s.Queue {
		if e.MachineID != "" {
			return true
		}
	}
	for _, r := range s.Reservations {
		if r.MachineID != "" {
			return true
		}
	}
	return false
}

// serialKeys is how runner serialization identifies "the same runner"
// (issue 26). Every entry has its runner key, its runner id. Under machine
// serialization an entry recording a machineId also has a machine key, and
// two entries conflict when they share any key: one seat (holder or
// reservation) per runner id and per machine, FIFO among the entries of
// one runner or one machine, a quarantine reclaimed by the first waiter
// sharing a key with it.
//
// An entry without a machineId (written before the lock switched to
// "machine", or by a client that drops the field) keeps only its runner
// key: it counts as a machine of its own, named by its runner id. The
// runner key is kept under "machine" too, so the rules are never weaker
// than runner serialization.
type serialKeys struct {
	byMachine bool
}

// newSerialKeys returns the keys of state s under cfg.
func newSerialKeys(s *State, cfg Config) serialKeys {
	return serialKeys{byMachine: MachineSerialization(s, cfg)}
}

// of returns the keys of an entry with this runner id and machine id.
func (k serialKeys) of(runnerID, machineID string) []string {
	keys := []string{"r:" + runnerID}
	if k.byMachine && machineID != "" {
		keys = append(keys, "m:"+machineID)
	}
	return keys
}

// keySet is a set of serialization keys.
type keySet map[string]bool

func (ks keySet) hasAny(keys []string) bool {
	for _, k := range keys {
		if ks[k] {
			return true
		}
	}
	return false
}

func (ks keySet) add(keys []string) {
	for _, k := range keys {
		ks[k] = true
	}
}

// occupancy indexes the holders and reservations of a state by key.
type occupancy struct {
	keys serialKeys
	// by maps a key to the occupants sharing it: holder i is i,
	// reservation j is len(Holders)+j.
	by      map[string][]int
	holders int
	s       *State
}

func newOccupancy(s *State, keys serialKeys) occupancy {
	o := occupancy{keys: keys, by: map[string][]int{}, holders: len(s.Holders), s: s}
	for i, h := range s.Holders {
		for _, k := range keys.of(h.RunnerID, h.MachineID) {
			o.by[k] = append(o.by[k], i)
		}
	}
	for j, r := range s.Reservations {
		for _, k := range keys.of(r.RunnerID, r.MachineID) {
			o.by[k] = append(o.by[k], o.holders+j)
		}
	}
	return o
}

// busy reports whether a holder or a reservation shares a key with e.
func (o occupancy) busy(e Entry) bool {
	for _, k := range o.keys.of(e.RunnerID, e.MachineID) {
		if len(o.by[k]) > 0 {
			return true
		}
	}
	return false
}

// quarantine returns the index of the reservation e may reclaim, or -1:
// the only occupant sharing a key with e is a quarantine. (Under machine
// serialization a sibling agent on the quarantine's machine reclaims it;
// a second occupant sharing a key, say a holder of e's runner id that was
// admitted before the machine was recorded, leaves nothing to reclaim.)
func (o occupancy) quarantine(e Entry) int {
	found := -1
	for _, k := range o.keys.of(e.RunnerID, e.MachineID) {
		for _, idx := range o.by[k] {
			if found >= 0 && idx != found {
				return -1
			}
			found = idx
		}
	}
	if found < o.holders {
		return -1
	}
	j := found - o.holders
	if o.s.Reservations[j].State != ReservationQuarantine {
		return -1
	}
	return j
}

// sameMachineOrRunner reports whether an entry (runner, machine) shares a
// serialization key with a reservation: the same runner id, or the same
// recorded machineId.
func sameMachineOrRunner(runnerID, machineID string, r Reservation) bool {
	return runnerID == r.RunnerID || (machineID != "" && machineID == r.MachineID)
}

// AffinityKey is the identity seat affinity follows: under machine
// serialization the entry's machineId when recorded ("machine:" prefixed,
// so it never equals a runner name), else RunnerKey.
func AffinityKey(e Entry, byMachine bool) string {
	if byMachine && e.MachineID != "" {
		return "machine:" + e.MachineID
	}
	return RunnerKey(e)
}

// checkMachineRequest refuses, before anything is written, an acquire
// whose lock asks for machine serialization but that carries no machine
// id (CodeMachineIDUnavailable), and a machine id that is not 32 lowercase
// hex digits (CodeInvalidMachineID).
func checkMachineRequest(cfg Config, id Identity, lock string) error {
	if id.MachineID != "" && !ValidMachineID(id.MachineID) {
		return newError(CodeInvalidMachineID, fmt.Sprintf("acquire %s: the machine id is not %d lowercase hexadecimal digits", lock, MachineIDLength))
	}
	if cfg.ByMachine() && id.MachineID == "" {
		return newError(CodeMachineIDUnavailable, fmt.Sprintf(
			"acquire %s: the lock config sets serializeBy \"machine\", but this runner's machine id could not be read; nothing was written (see docs/machine-queue.md, \"Machine identity\")", lock))
	}
	return nil
}

// validateMachineIDs checks every recorded machineId's form.
func validateMachineIDs(s *State) error {
	fail := func(kind string, i int, who string) error {
		return newError(CodeInvalidMachineID, fmt.Sprintf("validate lock state %q: %s %d (%s) has a machineId that is not %d lowercase hexadecimal digits", s.Lock, kind, i, who, MachineIDLength))
	}
	for i, h := range s.Holders {
		if h.MachineID != "" && !ValidMachineID(h.MachineID) {
			return fail("holder", i, h.HolderID)
		}
	}
	for i, e := range s.Queue {
		if e.MachineID != "" && !ValidMachineID(e.MachineID) {
			return fail("queue entry", i, e.HolderID)
		}
	}
	for i, r := range s.Reservations {
		if r.MachineID != "" && !ValidMachineID(r.MachineID) {
			return fail("reservation", i, r.ReservationID)
		}
	}
	return nil
}

// decodeMachineID reads the optional machineId of an entry or reservation
// (who names it in the error): absent is "", anything but 32 lowercase hex
// digits is CodeInvalidMachineID.
func decodeMachineID(m map[string]any, lock, who string) (string, error) {
	v, ok := m["machineId"]
	if !ok {
		return "", nil
	}
	str, isString := v.(string)
	if !isString || !ValidMachineID(str) {
		return "", newError(CodeInvalidMachineID, fmt.Sprintf(
			"decode lock state %q: %s has a machineId that is not %d lowercase hexadecimal digits", lock, who, MachineIDLength))
	}
	return str, nil
}
