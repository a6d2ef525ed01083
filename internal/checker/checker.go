// Package checker audits the full history of a lock's state file: every
// version ever committed, in order. It is how tests, the demo, the benchmark
// and simulations prove the safety invariants on every state written rather
// than on the last one only:
//
//   - occupancy: holders + reservations never exceed maxHolders;
//   - no duplicate: a holderId appears at most once across holders and queue;
//   - one seat per machine: no two holders or reservations record one
//     machineId (serializeBy "machine");
//   - FIFO: an admission never overtakes an earlier waiter on the same runner
//     (or the same recorded machine),
//     and never overtakes any waiter whose runner was free (the serialized
//     scan's only allowed skip is a waiter whose runner is occupied);
//   - no lost entry: a queued or holding identity disappears only by its own
//     admission or after its owner (or an authorized actor) asked to remove it;
//   - no schema downgrade.
//
// It also derives the figures the demo and benchmark report: admissions in
// order, handoff gaps (seat freed while someone waited → next admission) and
// seat utilization while jobs waited.
package checker

import (
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// Version is one committed version of the state file.
type Version struct {
	// Time is when the version was committed (the emulator's clock).
	Time time.Time
	// Content is the file's bytes; nil means the file was deleted.
	Content []byte
	// Message is the commit message.
	Message string
	// Actor names who wrote the version when the caller knows it (the
	// simulation attributes every write): "job:<holderId>@<attempt>",
	// "reaper", "recover", "old:<holderId>@<attempt>", "seed". Empty means
	// unknown; removals are then judged by Input.Removals only.
	Actor string
}

// Removal records that an actor was entitled to remove an identity from the
// lock from At onwards: its owner started a cleanup, the reaper proved it
// stale, or an operator recovered it.
type Removal struct {
	HolderID string
	At       time.Time
}

// Input is what Check needs besides the history.
type Input struct {
	// Lock is the lock name the versions must carry.
	Lock string
	// ServerURL validates incident run URLs; default https://github.com.
	ServerURL string
	// MaxHolders is the configured limit in force.
	MaxHolders int
	// Removals lists every authorized removal intent. An identity that
	// vanishes without an admission and without a removal at or before the
	// version's time is a lost entry.
	Removals []Removal
	// MaxOvertakes is the configured overtaking bound checked at schema 6
	// when CheckOvertakes is set: every queue entry's overtakes field, and
	// the checker's own count of admissions that passed the entry while its
	// runner was busy, must stay within it.
	MaxOvertakes   int
	CheckOvertakes bool
	// Authorize, when set, judges every removal of a version whose Actor is
	// known (see RemovalEvent) and returns "" when it was authorized or the
	// reason it was not. Removals by a version without an Actor fall back
	// to Removals.
	Authorize func(RemovalEvent) string
	// Seats is the config's named seats (issue 25), when it names them:
	// every admission's seat must be one of them and carry the holder's
	// labels. Empty means anonymous seats.
	Seats []lockstate.SeatConfig
}

// RemovalEvent is one identity or reservation that disappeared (or a
// quarantine that became a cooldown) between two versions.
type RemovalEvent struct {
	Version int
	Time    time.Time
	Message string
	Actor   string
	// Kind is "holder", "queue" or "quarantine".
	Kind string
	// Entry is the removed holder or queue entry (Kind holder/queue).
	Entry lockstate.Entry
	// Holder is the removed holder (Kind holder).
	Holder lockstate.Holder
	// Reservation is the removed quarantine (Kind quarantine), or the
	// reservation a removed holder became in the same version (Kind holder).
	Reservation *lockstate.Reservation
	// Schema is the schema of the version that removed it.
	Schema int
}

// Admission is one identity becoming a holder.
type Admission struct {
	HolderID string
	RunnerID string
	Time     time.Time
	// Overtook counts earlier waiters, on other runners, still queued after
	// this admission (the serialized scan's allowed skips).
	Overtook int
}

// Report is the result of Check. Violations lists every broken invariant in
// human-readable form; the counters break them down.
type Report struct {
	Versions       int
	MaxOccupied    int
	Limit          int
	OverAdmissions int
	Duplicates     int
	FIFOViolations int
	LostEntries    int
	Downgrades     int
	DecodeErrors   int
	// FencingViolations counts tokens reused, not above the counter, or a
	// counter that went backwards (schema 6).
	FencingViolations int
	// OvertakeViolations counts waiters overtaken beyond MaxOvertakes.
	OvertakeViolations int
	// MaxOvertaken is the most admissions that passed one waiter.
	MaxOvertaken int
	// SeatViolations counts seats given twice (a state recording one seat
	// on two holders or reservations) and holders on a seat that is not
	// configured or does not carry their labels (issue 25).
	SeatViolations int
	// PriorityInversions counts admissions that left a higher class
	// without the seat it could have taken, outside the overtaking bound.
	PriorityInversions int
	// MachineViolations counts states recording one machineId on two
	// holders or reservations (serializeBy "machine", issue 26).
	MachineViolations int
	// IncidentAdmissions counts admissions while an incident was active.
	IncidentAdmissions int
	// UnauthorizedRemovals counts removals Authorize refused.
	UnauthorizedRemovals int
	Admissions           []Admission
	// HandoffGaps are the delays between a seat being freed while someone
	// waited and the next admission.
	HandoffGaps []time.Duration
	// Handoffs pairs each handoff gap with the admission that ended it
	// (parallel to HandoffGaps), so a caller that knows when each job
	// noticed its admission (a direct handoff is noticed on the waiter's
	// next poll) can measure the gap up to then.
	Handoffs []Handoff
	// Utilization is the share of seat-time occupied while at least one job
	// waited (1.0 = no seat idle while anyone waited).
	Utilization float64
	Violations  []string
}

// OK reports whether no invariant was broken.
func (r Report) OK() bool { return len(r.Violations) == 0 }

type snapshot struct {
	t        time.Time
	st       *lockstate.State
	holders  map[string]lockstate.Holder
	queued   map[string]int // holderId -> queue index
	occupied map[string]bool
}

// Handoff is one seat freed while someone waited and the admission that took it.
type Handoff struct {
	HolderID          string
	FreedAt, Admitted time.Time
}

// Check audits versions (oldest first).
func Check(versions []Version, in Input) Report {
	rep := Report{Versions: len(versions), Limit: in.MaxHolders}
	removals := map[string][]time.Time{}
	for _, r := range in.Removals {
		removals[r.HolderID] = append(removals[r.HolderID], r.At)
	}
	authorized := func(id string, at time.Time) bool {
		for _, t := range removals[id] {
			if !t.After(at) {
				return true
			}
		}
		return false
	}
	violate := func(format string, args ...any) {
		rep.Violations = append(rep.Violations, fmt.Sprintf(format, args...))
	}

	ext := &extended{in: in, rep: &rep, violate: violate, issued: map[int64]bool{}, passed: map[string]int{}}
	var prev *snapshot
	var freeTimes []time.Time
	var waitSeat, waitTotal float64
	for i, v := range versions {
		if v.Content == nil {
			violate("version %d (%s): state file deleted", i, v.Message)
			prev = nil
			continue
		}
		st, err := lockstate.Decode(v.Content, lockstate.DecodeOptions{Lock: in.Lock, ServerURL: in.ServerURL})
		if err != nil {
			rep.DecodeErrors++
			if lockstate.CodeOf(err) == lockstate.CodeSeatConflict {
				rep.SeatViolations++
			}
			violate("version %d (%s): does not decode: %v", i, v.Message, err)
			continue
		}
		cur := index(v.Time, st)
		occ := len(st.Holders) + len(st.Reservations)
		rep.MaxOccupied = max(rep.MaxOccupied, occ)
		if in.MaxHolders > 0 && occ > in.MaxHolders {
			rep.OverAdmissions++
			violate("version %d (%s): %d holders + %d reservations exceed maxHolders %d",
				i, v.Message, len(st.Holders), len(st.Reservations), in.MaxHolders)
		}
		if m, a, b, ok := oneSeatPerMachine(st); !ok {
			rep.MachineViolations++
			violate("version %d (%s): one seat per machine broken: machine %s is held by %s and %s", i, v.Message, m, a, b)
		}
		seen := map[string]bool{}
		for _, h := range st.Holders {
			seen[h.HolderID] = true
		}
		for _, q := range st.Queue {
			if seen[q.HolderID] {
				rep.Duplicates++
				violate("version %d (%s): %s appears twice", i, v.Message, q.HolderID)
			}
			seen[q.HolderID] = true
		}
		if prev != nil {
			dt := cur.t.Sub(prev.t).Seconds()
			if len(prev.st.Queue) > 0 && dt > 0 && in.MaxHolders > 0 {
				waitSeat += dt * float64(min(len(prev.st.Holders)+len(prev.st.Reservations), in.MaxHolders))
				waitTotal += dt * float64(in.MaxHolders)
			}
			if st.SchemaVersion < prev.st.SchemaVersion {
				rep.Downgrades++
				violate("version %d (%s): schema downgraded from %d to %d", i, v.Message, prev.st.SchemaVersion, st.SchemaVersion)
			}
			// Removals: everything that was present and is gone.
			if v.Actor != "" && in.Authorize != nil {
				ext.removals(i, v, prev, cur)
			} else {
				for id := range prev.holders {
					if _, ok := cur.holders[id]; !ok && !authorized(id, cur.t) {
						rep.LostEntries++
						violate("version %d (%s): holder %s removed without an authorized removal", i, v.Message, id)
					}
				}
				for id := range prev.queued {
					_, held := cur.holders[id]
					_, still := cur.queued[id]
					if !held && !still && !authorized(id, cur.t) {
						rep.LostEntries++
						violate("version %d (%s): queued %s lost without admission or authorized removal", i, v.Message, id)
					}
				}
			}
			ext.fencing(i, v, prev, cur)
			ext.incident(i, v, prev, cur)
			// Frees while someone waits start a handoff clock; a seat freed
			// and handed to a waiter in the same version (direct handoff)
			// counts too.
			freed, handedOff := vacated(prev, cur)
			if freed > 0 && (len(st.Queue) > 0 || handedOff > 0) {
				for range freed {
					freeTimes = append(freeTimes, cur.t)
				}
			}
			first := len(rep.Admissions)
			seated := seatMode(in, prev, cur)
			admitted := checkAdmissions(i, v.Message, prev, cur, &rep, seated)
			if seated {
				ext.seats(i, v, prev, cur)
			} else {
				ext.overtakes(i, v, prev, cur)
			}
			for k := range admitted {
				if len(freeTimes) > 0 {
					rep.HandoffGaps = append(rep.HandoffGaps, cur.t.Sub(freeTimes[0]))
					rep.Handoffs = append(rep.Handoffs, Handoff{HolderID: rep.Admissions[first+k].HolderID, FreedAt: freeTimes[0], Admitted: cur.t})
					freeTimes = freeTimes[1:]
				}
			}
			if len(st.Queue) == 0 {
				freeTimes = nil
			}
		} else {
			for _, h := range st.Holders {
				rep.Admissions = append(rep.Admissions, Admission{HolderID: h.HolderID, RunnerID: h.RunnerID, Time: cur.t})
				if h.FencingToken > 0 {
					ext.issued[h.FencingToken] = true
				}
			}
		}
		ext.perVersion(i, v, st)
		prev = cur
	}
	if waitTotal > 0 {
		rep.Utilization = waitSeat / waitTotal
	} else {
		rep.Utilization = 1
	}
	return rep
}

// checkAdmissions records the holders new in cur and checks fairness against
// the queue of prev. An admission may pass an earlier waiter only when that
// waiter is not displaced by it: the waiter's runner is occupied (the
// serialized scan's allowed skip), or enough seats remain free for every
// earlier admissible waiter (it is simply polling later). Passing a waiter on
// its own runner is always a FIFO violation. It returns how many identities
// were admitted.
//
// With seats (seated: issue 25) a higher class may pass earlier waiters and
// a waiter may pass those whose labels need other seats, so only the
// same-runner rule is checked here; extended.seats checks the rest.
func checkAdmissions(i int, msg string, prev, cur *snapshot, rep *Report, seated bool) int {
	n := 0
	free := rep.Limit - len(cur.st.Holders) - len(cur.st.Reservations)
	for _, h := range cur.st.Holders {
		if _, was := prev.holders[h.HolderID]; was {
			continue
		}
		n++
		if reclaimed(prev, cur, h.Entry) {
			// A same-runner quarantine reclaim turns the runner's own
			// quarantine into this holder: it takes no seat another waiter
			// could have used, so it displaces nobody (spec §2.6).
			rep.Admissions = append(rep.Admissions, Admission{HolderID: h.HolderID, RunnerID: h.RunnerID, Time: cur.t})
			continue
		}
		pos, wasQueued := prev.queued[h.HolderID]
		if !wasQueued {
			pos = len(prev.st.Queue) // joined and admitted in one write: behind everyone
		}
		overtook, admissible := 0, 0
		runners := map[string]bool{}
		hk := entryKeys(h.Entry)
		for _, w := range prev.st.Queue[:pos] {
			j, stillQueued := cur.queued[w.HolderID]
			if !stillQueued {
				continue
			}
			if w.RunnerID == "" {
				// An upgrade to runner serialization in this very write
				// carried the waiter across with its runner id.
				w.RunnerID = cur.st.Queue[j].RunnerID
			}
			overtook++
			wk := entryKeys(w)
			switch {
			case w.RunnerID != "" && w.RunnerID == h.RunnerID:
				rep.FIFOViolations++
				rep.Violations = append(rep.Violations, fmt.Sprintf(
					"version %d (%s): %s admitted ahead of earlier waiter %s on the same runner %s", i, msg, h.HolderID, w.HolderID, w.RunnerID))
			case w.RunnerID != "" && shareKey(wk, hk):
				rep.FIFOViolations++
				rep.Violations = append(rep.Violations, fmt.Sprintf(
					"version %d (%s): %s admitted ahead of earlier waiter %s on the same machine", i, msg, h.HolderID, w.HolderID))
			case w.RunnerID == "":
				admissible++
			case !anyKey(cur.occupied, wk) && !anyKey(runners, wk):
				addKeys(runners, wk)
				admissible++
			default:
				addKeys(runners, wk)
			}
		}
		if !seated && rep.Limit > 0 && admissible > max(free, 0) {
			rep.FIFOViolations++
			rep.Violations = append(rep.Violations, fmt.Sprintf(
				"version %d (%s): %s admitted ahead of %d admissible earlier waiter(s) with only %d seat(s) left", i, msg, h.HolderID, admissible, max(free, 0)))
		}
		rep.Admissions = append(rep.Admissions, Admission{HolderID: h.HolderID, RunnerID: h.RunnerID, Time: cur.t, Overtook: overtook})
	}
	return n
}

// vacated counts the seats that became free in cur: holders and
// reservations gone, less reservations created (a cooldown or quarantine
// keeps its seat) and same-runner reclaims (a quarantine turned into its
// runner's holder frees nothing). handedOff counts the holders of cur that
// waited in prev's queue.
func vacated(prev, cur *snapshot) (freed, handedOff int) {
	for id := range prev.holders {
		if _, ok := cur.holders[id]; !ok {
			freed++
		}
	}
	old := map[string]bool{}
	for _, r := range prev.st.Reservations {
		old[r.ReservationID] = true
	}
	now := map[string]bool{}
	for _, r := range cur.st.Reservations {
		now[r.ReservationID] = true
		if !old[r.ReservationID] {
			freed--
		}
	}
	for id := range old {
		if !now[id] {
			freed++
		}
	}
	for _, h := range cur.st.Holders {
		if _, was := prev.holders[h.HolderID]; was {
			continue
		}
		if reclaimed(prev, cur, h.Entry) {
			freed--
		}
		if _, q := prev.queued[h.HolderID]; q {
			handedOff++
		}
	}
	// Net occupancy never counts a seat twice.
	prevOcc := len(prev.st.Holders) + len(prev.st.Reservations)
	curOcc := len(cur.st.Holders) + len(cur.st.Reservations)
	return max(freed, prevOcc-curOcc, 0), handedOff
}

func index(t time.Time, st *lockstate.State) *snapshot {
	s := &snapshot{t: t, st: st, holders: map[string]lockstate.Holder{}, queued: map[string]int{}, occupied: map[string]bool{}}
	for _, h := range st.Holders {
		s.holders[h.HolderID] = h
		addKeys(s.occupied, entryKeys(h.Entry))
	}
	for _, r := range st.Reservations {
		addKeys(s.occupied, resKeys(r))
	}
	for i, q := range st.Queue {
		if _, dup := s.queued[q.HolderID]; !dup {
			s.queued[q.HolderID] = i
		}
	}
	return s
}

// Percentile returns the p-th percentile (0..100, nearest rank) of ds, or 0
// for an empty slice.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	sort.Slice(s, func(a, b int) bool { return s[a] < s[b] })
	rank := int(p/100*float64(len(s))+0.999999) - 1
	return s[min(max(rank, 0), len(s)-1)]
}
