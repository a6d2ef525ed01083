package history

import (
	"cmp"
	"slices"
	"strconv"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// GroupStats is the admitted jobs of one priority class or one seat-label
// set (issue 25) and how long they waited.
type GroupStats struct {
	// Key is the class ("0" through "9") or the label set ("pro",
	// "plus,pro"; "any" for a job that asked for no labels).
	Key        string `json:"key"`
	Admissions int    `json:"admissions"`
	Wait       Dist   `json:"wait"`
}

// SeatStats is one named seat over the report window.
type SeatStats struct {
	Seat string `json:"seat"`
	// Admissions counts holders admitted to the seat; AffinityHits those
	// whose runner was the seat's last (its license may still be
	// activated there).
	Admissions   int `json:"admissions"`
	AffinityHits int `json:"affinity_hits"`
	// Utilization is the share of the window a holder had the seat;
	// ReservedShare the share a cooldown or quarantine kept it.
	Utilization   float64 `json:"utilization"`
	ReservedShare float64 `json:"reserved_share"`
}

// seatAcc accumulates the per-class, per-label-set and per-seat figures.
type seatAcc struct {
	any              bool // a seat, label or class was seen
	classWaits       map[int][]time.Duration
	labelWaits       map[string][]time.Duration
	held, reserved   map[string]float64
	admissions, hits map[string]int
}

func newSeatAcc() *seatAcc {
	return &seatAcc{classWaits: map[int][]time.Duration{}, labelWaits: map[string][]time.Duration{},
		held: map[string]float64{}, reserved: map[string]float64{}, admissions: map[string]int{}, hits: map[string]int{}}
}

// accrue adds dt seconds of s's named-seat occupancy.
func (a *seatAcc) accrue(s *lockstate.State, dt float64) {
	if s == nil || dt <= 0 {
		return
	}
	for _, h := range s.Holders {
		if h.Seat != "" {
			a.held[h.Seat] += dt
		}
	}
	for _, r := range s.Reservations {
		if r.Seat != "" {
			a.reserved[r.Seat] += dt
		}
	}
}

// admit records holder h's admission from prev after waiting wait.
func (a *seatAcc) admit(h lockstate.Holder, prev *lockstate.State, wait time.Duration) {
	if h.Seat != "" || h.Labels != "" || h.Priority != 0 {
		a.any = true
	}
	a.classWaits[h.Priority] = append(a.classWaits[h.Priority], wait)
	key := h.Labels
	if key == "" {
		key = "any"
	}
	a.labelWaits[key] = append(a.labelWaits[key], wait)
	if h.Seat == "" {
		return
	}
	a.admissions[h.Seat]++
	for _, u := range prev.Seats {
		if u.Name == h.Seat && u.LastRunner != "" && (u.LastRunner == lockstate.RunnerKey(h.Entry) || u.LastRunner == lockstate.AffinityKey(h.Entry, true)) {
			a.hits[h.Seat]++
		}
	}
}

// finish writes the figures into st (nothing when the window saw no seat,
// label or class); window is the window's length in seconds.
func (a *seatAcc) finish(st *Stats, window float64) {
	for seat := range a.held {
		a.any = a.any || seat != ""
	}
	if !a.any {
		return
	}
	for class, ws := range a.classWaits {
		st.Classes = append(st.Classes, GroupStats{Key: strconv.Itoa(class), Admissions: len(ws), Wait: NewDist(ws)})
	}
	slices.SortFunc(st.Classes, func(x, y GroupStats) int { return cmp.Compare(y.Key, x.Key) })
	for key, ws := range a.labelWaits {
		st.LabelSets = append(st.LabelSets, GroupStats{Key: key, Admissions: len(ws), Wait: NewDist(ws)})
	}
	slices.SortFunc(st.LabelSets, func(x, y GroupStats) int { return cmp.Compare(x.Key, y.Key) })
	names := map[string]bool{}
	for _, m := range []map[string]float64{a.held, a.reserved} {
		for k := range m {
			names[k] = true
		}
	}
	for k := range a.admissions {
		names[k] = true
	}
	for _, sc := range st.Config.Seats.List() {
		names[sc.Name] = true
	}
	for name := range names {
		s := SeatStats{Seat: name, Admissions: a.admissions[name], AffinityHits: a.hits[name]}
		if window > 0 {
			s.Utilization, s.ReservedShare = a.held[name]/window, a.reserved[name]/window
		}
		st.SeatUse = append(st.SeatUse, s)
	}
	slices.SortFunc(st.SeatUse, func(x, y SeatStats) int { return cmp.Compare(x.Seat, y.Seat) })
}
