package lockstate

import (
	"fmt"
	"slices"
	"strings"
)

// SeatUse is one element of the state's "seats" array (schema 6, named
// seats): who took the seat last and when, for seat affinity. It is
// recorded, not derived: once a holder and its cooldown are gone the state
// keeps no other trace of who used the seat.
type SeatUse struct {
	// Name is the seat's name.
	Name string
	// LastRunner is the runner key (RunnerKey) of the seat's last holder.
	LastRunner string
	// LastUsedAt is when that holder was admitted (ISO 8601, milliseconds).
	LastUsedAt string
}

// RunnerKey is the machine identity seat affinity follows: the runner's
// own RUNNER_NAME when recorded, else the caller's runner id.
func RunnerKey(e Entry) string {
	if e.RunnerName != "" {
		return e.RunnerName
	}
	return e.RunnerID
}

// LabelList returns the entry's seat labels as a slice (nil for any seat).
func (e Entry) LabelList() []string {
	if e.Labels == "" {
		return nil
	}
	return strings.Split(e.Labels, ",")
}

// JoinLabels is the Entry.Labels form of a normalized label list.
func JoinLabels(labels []string) string { return strings.Join(labels, ",") }

// decodeSeatFields reads seat, labels and priority of a holder or queue
// entry at schema 6 (below it they are unknown fields and dropped).
func decodeSeatFields(m map[string]any, e *Entry, schema int, kind string, index int, lock string) error {
	if schema < FencedSchemaVersion {
		return nil
	}
	fail := func(detail string) error {
		return newError(CodeInvalidSeat, fmt.Sprintf("decode lock state %q: %s %d (%s) %s", lock, kind, index, e.HolderID, detail))
	}
	if v, ok := m["seat"]; ok {
		str, isString := v.(string)
		if !isString || kind != "holder" || !ValidSeatName(str) {
			return fail("has a seat that is not a valid seat name on a holder")
		}
		e.Seat = str
	}
	if v, ok := m["labels"]; ok {
		list, isList := v.([]any)
		if !isList || len(list) == 0 {
			return fail("has labels that are not a non-empty array")
		}
		labels := make([]string, 0, len(list))
		for _, l := range list {
			str, isString := l.(string)
			if !isString {
				return fail("has a label that is not a string")
			}
			labels = append(labels, str)
		}
		e.Labels = strings.Join(labels, ",")
	}
	if v, ok := m["priority"]; ok {
		n, valid := safeInteger(v)
		if !valid || n > MaxPriority {
			return fail(fmt.Sprintf("has a priority that is not an integer from 0 through %d", MaxPriority))
		}
		e.Priority = int(n)
	}
	return nil
}

// decodeSeatState reads the top-level seats array (schema 6) and drops
// reservation seats below schema 6, where "seat" is an unknown field.
func decodeSeatState(s *State, obj map[string]any) error {
	if s.SchemaVersion < FencedSchemaVersion {
		for i := range s.Reservations {
			s.Reservations[i].Seat = ""
		}
		return nil
	}
	v, ok := obj["seats"]
	if !ok {
		return nil
	}
	list, isList := v.([]any)
	if !isList {
		return newError(CodeInvalidSeat, fmt.Sprintf("decode lock state %q: seats must be an array", s.Lock))
	}
	for i, item := range list {
		m, isObj := item.(map[string]any)
		if !isObj {
			return newError(CodeInvalidSeat, fmt.Sprintf("decode lock state %q: seats[%d] must be an object", s.Lock, i))
		}
		var u SeatUse
		for _, f := range []struct {
			key string
			dst *string
		}{{"name", &u.Name}, {"lastRunner", &u.LastRunner}, {"lastUsedAt", &u.LastUsedAt}} {
			str, isString := m[f.key].(string)
			if !isString {
				return newError(CodeInvalidSeat, fmt.Sprintf("decode lock state %q: seats[%d].%s must be a string", s.Lock, i, f.key))
			}
			*f.dst = str
		}
		s.Seats = append(s.Seats, u)
	}
	return nil
}

// appendSeatMembers writes seat, labels and priority (each only when set)
// as the last keys of a holder or queue entry.
func appendSeatMembers(o jsonObject, e Entry) jsonObject {
	if e.Seat != "" {
		o = append(o, jsonMember{"seat", jsonString(e.Seat)})
	}
	if e.Labels != "" {
		arr := jsonArray{}
		for _, l := range e.LabelList() {
			arr = append(arr, jsonString(l))
		}
		o = append(o, jsonMember{"labels", arr})
	}
	if e.Priority != 0 {
		o = append(o, jsonMember{"priority", jsonInt(e.Priority)})
	}
	return o
}

func seatUsesNode(uses []SeatUse) jsonArray {
	arr := make(jsonArray, 0, len(uses))
	for _, u := range uses {
		arr = append(arr, jsonObject{{"name", jsonString(u.Name)}, {"lastRunner", jsonString(u.LastRunner)}, {"lastUsedAt", jsonString(u.LastUsedAt)}})
	}
	return arr
}

// validateSeatState checks the issue-25 fields: none below schema 6; seat
// and label names valid, label sets sorted and unique, priorities in
// 0..MaxPriority, no seat on a queue entry; no two holders or reservations
// on one seat; seats[] names valid and unique with valid times.
func validateSeatState(s *State) error {
	fail := func(code Code, format string, args ...any) error {
		return newError(code, fmt.Sprintf("validate lock state %q: ", s.Lock)+fmt.Sprintf(format, args...))
	}
	fenced := s.SchemaVersion >= FencedSchemaVersion
	if !fenced && len(s.Seats) > 0 {
		return fail(CodeInvalidSeat, "seats require schema %d, state is schema %d", FencedSchemaVersion, s.SchemaVersion)
	}
	check := func(e Entry, kind string, i int) error {
		if !fenced && (e.Seat != "" || e.Labels != "" || e.Priority != 0) {
			return fail(CodeInvalidSeat, "%s %d (%s) carries seat fields, which require schema %d", kind, i, e.HolderID, FencedSchemaVersion)
		}
		if e.Seat != "" && (kind != "holder" || !ValidSeatName(e.Seat)) {
			return fail(CodeInvalidSeat, "%s %d (%s) seat %q is invalid or not on a holder", kind, i, e.HolderID, clip(e.Seat, 80))
		}
		if e.Priority < 0 || e.Priority > MaxPriority {
			return fail(CodeInvalidSeat, "%s %d (%s) priority %d is outside 0..%d", kind, i, e.HolderID, e.Priority, MaxPriority)
		}
		if e.Labels != "" {
			l := e.LabelList()
			n, err := NormalizeLabels(l)
			if err != nil || !slices.Equal(n, l) {
				return fail(CodeInvalidSeat, "%s %d (%s) labels %q are not a sorted, unique set of valid names", kind, i, e.HolderID, clip(e.Labels, 80))
			}
		}
		return nil
	}
	taken := map[string]string{}
	take := func(seat, who string) error {
		if seat == "" {
			return nil
		}
		if other, dup := taken[seat]; dup {
			return fail(CodeSeatConflict, "seat %s is recorded by both %s and %s", seat, other, who)
		}
		taken[seat] = who
		return nil
	}
	for i, h := range s.Holders {
		if err := check(h.Entry, "holder", i); err != nil {
			return err
		}
		if err := take(h.Seat, "holder "+h.HolderID); err != nil {
			return err
		}
	}
	for i, e := range s.Queue {
		if err := check(e, "queue entry", i); err != nil {
			return err
		}
	}
	for _, r := range s.Reservations {
		if r.Seat != "" && (!fenced || !ValidSeatName(r.Seat)) {
			return fail(CodeInvalidSeat, "reservation %s seat %q is invalid or below schema %d", r.ReservationID, clip(r.Seat, 80), FencedSchemaVersion)
		}
		if err := take(r.Seat, "reservation "+r.ReservationID); err != nil {
			return err
		}
	}
	names := map[string]bool{}
	for i, u := range s.Seats {
		if !ValidSeatName(u.Name) || names[u.Name] || !validUTF8(u.LastRunner) {
			return fail(CodeInvalidSeat, "seats[%d] name %q is invalid or repeated", i, clip(u.Name, 80))
		}
		names[u.Name] = true
		if _, ok := ParseTime(u.LastUsedAt); !ok {
			return fail(CodeInvalidSeat, "seats[%d] (%s) lastUsedAt %q is not a timestamp", i, u.Name, clip(u.LastUsedAt, 40))
		}
	}
	return nil
}
